/**
 * A saturated pool serves sellers in rounds: real worker processes, a real
 * redis-server and the mock API. 12 sellers x 20 rows are queued before a
 * 2-process pool starts (2 requests in flight, so the pool, not the rule, is
 * the limit); a 3-row seller arrives while it is busy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { loadConfig } from '../../src/config.js';
import { QUEUE_NAME } from '../../src/keys.js';
import { createRedis } from '../../src/redis.js';
import { QueueSet, type RegistrationJob } from '../../src/queue.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';
import { readStatus } from '../../src/progress/status.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { loadedSheetOf } from '../helpers/uploads.js';

let stage: Stage;
const SELLERS = Array.from({ length: 12 }, (_, i) => `F${i}`);
const ROWS = 20;

beforeAll(async () => {
  stage = await startStage(
    { RATE_LIMIT_MAX: '1000', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '0', QUEUE_PREFIX: '{fair}', WORKER_CONCURRENCY: '1' },
    { MOCK_LATENCY_MS: '15-25' },
  );
});

afterAll(async () => {
  await stage?.stop();
});

describe('fair share of a saturated pool', () => {
  it('serves every seller in rounds, and a small upload arriving later whole within about one round', async () => {
    const config = loadConfig(stage.env);
    const redis = createRedis(config, 'cli');
    const queue = new Queue<RegistrationJob>(QUEUE_NAME, { connection: { url: stage.redis.url } as never, prefix: config.queuePrefix });
    const deps = { redis, queues: QueueSet.of(queue), config, now: Date.now };
    try {
      for (const s of SELLERS) await enqueueUpload(deps, s, loadedSheetOf(s, ROWS));
      const pool = stage.pool(2);
      await pool.waitFor(/worker process ready/);
      // let the pool get well into the backlog, then a small seller arrives
      for (;;) {
        const { totals } = await stage.stats();
        if ((totals.registered ?? 0) >= 60) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      // 1000 per second allowed, 2 requests in flight: the pool sets every waiting seller's pace
      const busy = await readStatus(redis, config);
      const waiting = busy.sellers.filter((s) => s.etaMs > 0);
      expect(waiting.length).toBeGreaterThan(0);
      expect(waiting.every((s) => s.pace === 'pool')).toBe(true);
      const lateAt = Date.now();
      await enqueueUpload(deps, 'LATE', loadedSheetOf('LATE', 3));

      const total = SELLERS.length * ROWS + 3;
      for (;;) {
        const { totals } = await stage.stats();
        if ((totals.registered ?? 0) >= total) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const { sellers } = await stage.stats();
      const arrivals = Object.entries(sellers)
        .flatMap(([seller, s]) => (s.times ?? []).map((t) => ({ seller, t })))
        .sort((a, b) => a.t - b.t);
      expect(arrivals).toHaveLength(total);

      // first-come by upload would give the first 20 registrations to F0 alone
      const firstRound = new Set(arrivals.slice(0, SELLERS.length).map((a) => a.seller));
      expect(firstRound.size).toBeGreaterThanOrEqual(SELLERS.length - 2);
      // no seller has its k+2-th row registered before every seller has its k-th
      const kth = (seller: string, k: number) => arrivals.filter((a) => a.seller === seller)[k]!.t;
      for (let k = 0; k + 2 < ROWS; k += 3) {
        const lastKth = Math.max(...SELLERS.map((s) => kth(s, k)));
        const firstLater = Math.min(...SELLERS.map((s) => kth(s, k + 2)));
        expect(firstLater).toBeGreaterThan(lastKth);
      }
      // the late seller's 3 rows (a small upload) finish within about one round of the others, not behind their backlog
      const lateDone = kth('LATE', 2);
      const othersBetween = arrivals.filter((a) => a.seller !== 'LATE' && a.t > lateAt && a.t < lateDone).length;
      const othersAfter = arrivals.filter((a) => a.seller !== 'LATE' && a.t > lateDone).length;
      expect(othersBetween).toBeLessThanOrEqual(SELLERS.length + 4);
      expect(othersAfter).toBeGreaterThan(SELLERS.length);
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });
});
