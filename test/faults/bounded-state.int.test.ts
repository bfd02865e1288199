/**
 * Bounded Redis state: finished jobs are removed by age/count, limiter keys
 * expire, upload counters expire after their retention; after a run and the
 * retention period only the queue's own fixed keys are left.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../../src/paths.js';
import { runCli, poolReady } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';

let stage: Stage | undefined;
afterAll(async () => { await stage?.stop(); });

// BullMQ's own queue keys, and the one record of which Redis master the limiter last saw
// (src/rate-limit/lost-writes.ts), the running pools' presence (src/worker/pool-presence.ts) and
// when the API last answered a row (src/steering/outage.ts, one member): fixed in number, not
// growing with the work
const FIXED = /^(\{bounded\}:registrations:(meta|events|stalled-check|marker|id)|bounded:redis-epoch|bounded:pools|bounded:api-answered)$/;

describe('bounded Redis state', () => {
  it('returns to the baseline key count after a run and the retention period', async () => {
    stage = await startStage({
      QUEUE_PREFIX: '{bounded}', RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '400', RATE_LIMIT_GUARD_MS: '0',
      JOB_RETENTION_S: '1', JOB_RETENTION_COUNT: '0', UPLOAD_RETENTION_S: '2',
    });
    const redis = stage.redis.client();
    const pool = stage.pool(2);
    await poolReady(pool, 2);
    const baseline = (await redis.keys('*')).filter((k) => !FIXED.test(k));
    expect(baseline).toEqual([]);

    const up = JSON.parse((await runCli(['upload', join(FIXTURES_DIR, 'seller-b-60-korean.xlsx'), '--seller', 'B1', '--json'], stage.env)).stdout);
    await runCli(['status', '--upload', up.uploadId, '--wait'], stage.env, 60_000);
    const during = await redis.keys('*');
    expect(during.some((k) => k.startsWith('bounded:rl:{B1}:'))).toBe(true);
    expect(during.some((k) => k.startsWith('bounded:up:{B1}:'))).toBe(true);
    // `bounded:unnotified` is one key that holds the uploads not yet announced
    // (src/steering/webhooks.ts): it has no TTL, as the pool's supervisor empties it
    // within a second of an upload finishing, and it must be gone after retention below
    const expiring = during.filter((x) => x.startsWith('bounded:') && !FIXED.test(x) && x !== 'bounded:unnotified');
    // -1 is a key without a TTL; -2 one that expired since KEYS listed it (it had one)
    for (const k of expiring) expect(await redis.pttl(k), `${k} has a TTL`).not.toBe(-1);

    const deadline = Date.now() + 15_000;
    let left = during;
    while (Date.now() < deadline) {
      left = (await redis.keys('*')).filter((k) => !FIXED.test(k));
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(left).toEqual([]);
    process.stdout.write(`[fault] bounded state: ${during.length} keys during the run, ${left.length} beyond the queue's fixed keys after retention\n`);
  });
});
