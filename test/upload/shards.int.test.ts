/**
 * Queue shards on a single Redis, and a change of QUEUE_SHARDS with uploads in
 * flight: the pool (QUEUE_SHARDS=3) serves the uploads made with 1 shard and
 * with 3, each on the shard its upload recorded; every row registered once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { namespaceOf, uploadKeys } from '../../src/keys.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { shardPrefixes } from '../../src/queue-shards.js';
import { runCli, poolReady } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';

let stage: Stage | undefined;
afterAll(async () => { await stage?.stop(); });

describe('queue shards on a single Redis', () => {
  it('serve every shard an upload went to, when QUEUE_SHARDS changes mid-flight', async () => {
    stage = await startStage({ QUEUE_PREFIX: '{shq}', RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '50' });
    const env = (shards: number) => ({ ...stage!.env, QUEUE_SHARDS: String(shards) });
    // uploads first, with 1 shard (the plain prefix) and with 3; the pool starts after, with 3
    const sheets = ['seller-c-7.xlsx', 'seller-b-60-korean.xlsx'];
    const ups: Array<{ uploadId: string; sellerId: string; shards: number }> = [];
    for (const [i, shards] of [1, 3, 1, 3, 3].entries()) {
      const sellerId = `SH${i}`;
      const r = await runCli(['upload', join(FIXTURES_DIR, sheets[i % 2]!), '--seller', sellerId, '--json'], env(shards));
      expect(r.code).toBe(0);
      ups.push({ uploadId: JSON.parse(r.stdout).uploadId, sellerId, shards });
    }
    const redis = stage.redis.client();
    const three = shardPrefixes('{shq}', 3);
    for (const u of ups) {
      const queue = await redis.hget(uploadKeys(namespaceOf('{shq}'), u.sellerId, u.uploadId).upload, 'queue');
      if (u.shards === 1) expect(queue).toBe('{shq}');
      else expect(three).toContain(queue);
    }
    const pool = stage.pool(2, { QUEUE_SHARDS: '3' });
    await poolReady(pool, 2);
    const done = await runCli(['status', '--wait', '--json'], stage.env, 90_000);
    const status = JSON.parse(done.stdout) as { uploads: Array<{ sellerId: string; total: number; registered: number; done: boolean }> };
    expect(status.uploads).toHaveLength(5);
    for (const u of status.uploads) expect(u).toMatchObject({ done: true, registered: u.total });
    const stats = await stage.stats();
    expect(stats.totals).toMatchObject({ registered: 7 * 3 + 60 * 2, tooMany: 0, duplicates: 0 });
    expect(pool.output()).toMatch(/"queues":4/); // the 3 shards and the plain prefix
  });
});
