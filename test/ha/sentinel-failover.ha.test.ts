/**
 * Sentinel failover mid-run: the master is SIGKILLed while three sellers'
 * uploads are being registered (down-after 1000 ms, three Sentinels). The
 * replica was in sync: nothing the sellers were told is lost, nothing is
 * registered twice, no 429, and registrations resume within 10 s.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startSentinelSet } from '../helpers/redis-sentinel.js';
import { RUNS, cleanUp, runCase, summary, type RunResult } from './harness.js';

const results: RunResult[] = [];
afterAll(() => {
  if (results.length) console.log(`[ha] ${summary(results)}`);
  cleanUp();
});

describe('Sentinel failover mid-run', () => {
  it(`loses no enqueued row, registers none twice, sees no 429 and recovers within 10 s (${RUNS} runs)`, async () => {
    for (let run = 1; run <= RUNS; run++) {
      const set = await startSentinelSet('ha', 3, 1000);
      try {
        const r = await runCase('sentinel-failover', run, {
          REDIS_URL: 'redis://127.0.0.1:1', REDIS_SENTINELS: set.seeds, REDIS_SENTINEL_NAME: 'ha',
        }, async () => {
          set.master.process.kill('SIGKILL');
          return Date.now();
        });
        results.push(r);
      } finally {
        await set.stop();
      }
    }
    for (const r of results) {
      expect(r, JSON.stringify(r)).toMatchObject({ lost: 0, twice: 0, tooMany: 0 });
      expect(r.recoveryMs, JSON.stringify(r)).toBeGreaterThan(0);
      expect(r.recoveryMs, JSON.stringify(r)).toBeLessThanOrEqual(10_000);
    }
  }, 15 * 60_000);
});
