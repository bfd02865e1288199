/**
 * An upload whose counters lost rows that its jobs finished (on a cluster, a
 * lossy failover of the seller's master while the queue's master kept the
 * completions) is healed by the pool: it reaches done with counts that match
 * what the API registered, and nothing is sent again. Real redis-server, pool
 * and mock API; the loss is made as a lost write leaves it: three rows'
 * outcomes and their counts removed, their completed jobs kept. A row BullMQ
 * failed for stalling too often is counted failed with a reason a seller can act on.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { QUEUE_NAME, namespaceOf, uploadKeys } from '../../src/keys.js';
import { jobIdFor } from '../../src/queue-shards.js';
import { STALLED_REASON } from '../../src/upload/reconcile.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';

let stage: Stage | undefined;
afterAll(async () => { await stage?.stop(); });

describe('uploads whose counts were lost', () => {
  it('are counted again from their finished jobs, and end done with the API\'s counts', async () => {
    stage = await startStage({ QUEUE_PREFIX: '{heal}', RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '0' });
    const pool = stage.pool(1);
    await pool.waitFor(/worker process ready/);
    const up = JSON.parse((await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'R1', '--json'], stage.env)).stdout);
    await runCli(['status', '--upload', up.uploadId, '--wait'], stage.env, 60_000);

    const redis = stage.redis.client();
    const keys = uploadKeys(namespaceOf('{heal}'), 'R1', up.uploadId);
    const rows = await redis.hgetall(keys.rows);
    const gone = Object.keys(rows).slice(0, 3);
    await redis.hdel(keys.rows, ...gone);
    await redis.hincrby(keys.upload, 'registered', -3);
    // and one whose job BullMQ failed for stalling too often (its process killed mid-row 4 times)
    const stalled = Object.keys(rows)[3]!;
    await redis.hdel(keys.rows, stalled);
    await redis.hincrby(keys.upload, 'registered', -1);
    const stalledJob = `{heal}:${QUEUE_NAME}:${jobIdFor(up.uploadId, Number(stalled))}`;
    await redis.hdel(stalledJob, 'returnvalue');
    await redis.hset(stalledJob, 'failedReason', 'job stalled more than allowable limit');
    const stuck = JSON.parse((await runCli(['status', '--upload', up.uploadId, '--json'], stage.env)).stdout);
    expect(stuck.uploads[0]).toMatchObject({ registered: 3, pending: 4, lost: 0, done: false });

    // two passes of the reconciler (5 s apart): the first sees it, the second finds it stalled
    const done = await runCli(['status', '--upload', up.uploadId, '--wait', '--json'], stage.env, 30_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ total: 7, registered: 6, failed: 1, pending: 0, lost: 0, done: true });
    for (const row of gone) expect(JSON.parse((await redis.hget(keys.rows, row))!)).toMatchObject({ status: 'registered', productId: JSON.parse(rows[row]!).productId });
    // BullMQ's words are not a reason a seller can act on
    expect(JSON.parse((await redis.hget(keys.rows, stalled))!)).toMatchObject({ status: 'failed', reason: STALLED_REASON });
    await pool.waitFor(/rows counted again from their finished jobs/);
    expect(pool.output().match(/"msg":"upload finished"/g)).toHaveLength(2);
    const stats = await stage.stats();
    expect(stats.sellers.R1).toMatchObject({ registered: 7, requests: 7 }); // nothing was sent again
  });
});
