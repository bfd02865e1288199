/**
 * A 5 s freeze: the single Redis is stopped (SIGSTOP) while three sellers'
 * uploads are being registered, and resumed (SIGCONT) 5 s later. Nothing is
 * lost (the same process, the same data): no 429, none registered twice,
 * registrations resume once Redis answers.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startRedis } from '../helpers/redis-server.js';
import { RUNS, cleanUp, runCase, summary, type RunResult } from './harness.js';

const results: RunResult[] = [];
afterAll(() => {
  if (results.length) console.log(`[ha] ${summary(results)}`);
  cleanUp();
});

describe('a 5 s freeze of Redis', () => {
  it(`loses nothing, registers none twice and sees no 429 (${RUNS} runs)`, async () => {
    for (let run = 1; run <= RUNS; run++) {
      const redis = await startRedis();
      try {
        const r = await runCase('freeze-5s', run, { REDIS_URL: redis.url }, async () => {
          redis.process.kill('SIGSTOP');
          const faultAt = Date.now();
          await new Promise((res) => setTimeout(res, 5000));
          redis.process.kill('SIGCONT');
          return faultAt;
        });
        results.push(r);
      } finally {
        redis.process.kill('SIGCONT');
        await redis.stop();
      }
    }
    for (const r of results) {
      expect(r, JSON.stringify(r)).toMatchObject({ lost: 0, twice: 0, tooMany: 0 });
      expect(r.recoveryMs, JSON.stringify(r)).toBeGreaterThanOrEqual(5000);
    }
  }, 15 * 60_000);
});
