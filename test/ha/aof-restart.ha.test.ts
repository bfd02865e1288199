/**
 * A single Redis killed (SIGKILL) and restarted from its AOF (appendfsync
 * everysec, as in docker-compose): it may lose up to its last second of
 * writes. A fourth seller uploads just before the kill, so that its rows may
 * be among them. Asserted: no 429, none registered twice, and every upload
 * ends: `status --wait` returns, with any rows Redis lost counted as lost
 * (not waiting forever), and no more rows missing at the API than it shows.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startRedis } from '../helpers/redis-server.js';
import { RUNS, cleanUp, runCase, summary, type RunResult } from './harness.js';

const results: RunResult[] = [];
afterAll(() => {
  if (results.length) console.log(`[ha] ${summary(results)}`);
  cleanUp();
});

describe('a single Redis killed and restarted from its AOF', () => {
  it(`sees no 429, registers none twice, and shows lost rows as lost (${RUNS} runs)`, async () => {
    for (let run = 1; run <= RUNS; run++) {
      const redis = await startRedis(['--appendonly', 'yes', '--appendfsync', 'everysec']);
      try {
        const r = await runCase('aof-restart', run, { REDIS_URL: redis.url }, async (stage) => {
          const late = await stage.upload('H4', 10);
          (stage as typeof stage & { extraEnqueued: number }).extraEnqueued = late.enqueued;
          const exited = new Promise((res) => redis.process.once('exit', res));
          redis.process.kill('SIGKILL');
          const faultAt = Date.now();
          await exited;
          await redis.restart();
          return faultAt;
        });
        results.push(r);
      } finally {
        await redis.stop();
      }
    }
    for (const r of results) {
      expect(r, JSON.stringify(r)).toMatchObject({ twice: 0, tooMany: 0 });
      // a row the API never registered is one status shows as lost
      expect(r.lost, JSON.stringify(r)).toBeLessThanOrEqual(r.statusLost);
    }
  }, 15 * 60_000);
});
