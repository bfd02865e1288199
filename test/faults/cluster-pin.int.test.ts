/**
 * A seller's pin on a real 3-master Redis Cluster (src/seller-home.ts): chosen
 * at its first upload, kept when QUEUE_SHARDS changes, so that its uploads of
 * before and after share one queue shard and one window (the mock API enforces
 * the rule: no 429). A first `limits set` pins too; a seller with keys under its
 * own tag from before pins existed keeps them there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { namespaceOf, sellerKeys, uploadIndexKey, uploadKeys } from '../../src/keys.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { shardOf, shardPrefixes } from '../../src/queue-shards.js';
import { connectChecked, createRedis, type RedisClient } from '../../src/redis.js';
import { homeKey, homeOf, tagOf } from '../../src/seller-home.js';
import { baseEnv, runCli, startCli, type Running, poolReady } from '../helpers/cli.js';
import { freePort } from '../helpers/redis-server.js';
import { startCluster, type TestCluster } from '../helpers/redis-cluster.js';

const PREFIX = '{pin}';
const NS = namespaceOf(PREFIX);
let cluster: TestCluster;
let api: Running;
let apiUrl: string;
let redis: RedisClient;
let env: (shards: number) => NodeJS.ProcessEnv;

beforeAll(async () => {
  cluster = await startCluster();
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  // the API enforces the same rule as the pool: a second window would meet 429s
  api = startCli(['mock-api', '--port', String(port)], baseEnv({ RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', MOCK_LATENCY_MS: '2-10' }));
  await api.waitFor(/mock registration API listening/);
  env = (shards) => baseEnv({
    REDIS_CLUSTER_NODES: cluster.seeds, REGISTRATION_API_URL: apiUrl, QUEUE_PREFIX: PREFIX, QUEUE_SHARDS: String(shards),
    RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '50', SHUTDOWN_TIMEOUT_MS: '10000',
  });
  const config = loadConfig(env(6));
  redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await api?.stop();
  await cluster?.stop();
});

async function upload(file: string, seller: string, shards: number): Promise<string> {
  const r = await runCli(['upload', join(FIXTURES_DIR, file), '--seller', seller, '--json'], env(shards));
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { uploadId: string }).uploadId;
}

const queueOf = async (seller: string, uploadId: string) =>
  redis.hget(uploadKeys(NS, seller, uploadId, await homeOf(redis, NS, seller)).upload, 'queue');

describe('a seller pinned to a queue shard on Redis Cluster', () => {
  it('keeps its shard and its one window when QUEUE_SHARDS changes between two of its uploads', async () => {
    const seller = 'PIN1';
    const six = shardPrefixes(PREFIX, 6);
    const three = shardPrefixes(PREFIX, 3);
    expect(shardOf(seller, three)).not.toBe(shardOf(seller, six));
    const pool = startCli(['workers', '--processes', '3'], env(6));
    try {
      await poolReady(pool, 3, 30_000);
      const first = await upload('seller-c-7.xlsx', seller, 6);
      // an operator halves the shards: the seller's next upload still goes where its first went
      const second = await upload('seller-b-60-korean.xlsx', seller, 3);
      expect(await redis.get(homeKey(NS, seller))).toBe(shardOf(seller, six));
      expect(await queueOf(seller, first)).toBe(shardOf(seller, six));
      expect(await queueOf(seller, second)).toBe(shardOf(seller, six));
      const done = await runCli(['status', '--wait', '--json'], env(3), 60_000);
      expect(done.code, done.stderr).toBe(0);
      const uploads = (JSON.parse(done.stdout) as { uploads: Array<{ uploadId: string; registered: number; done: boolean }> }).uploads;
      expect(uploads.find((u) => u.uploadId === first)).toMatchObject({ done: true, registered: 7 });
      expect(uploads.find((u) => u.uploadId === second)?.done).toBe(true);
      // the window's keys lie under the shard's tag, none under the seller's own
      const tag = tagOf(shardOf(seller, six));
      expect(await redis.exists(sellerKeys(NS, seller).plan, sellerKeys(NS, seller).sent)).toBe(0);
      expect(await redis.exists(sellerKeys(NS, seller, tag).plan)).toBe(1);
      const stats = (await (await fetch(`${apiUrl}/_stats`)).json()) as { sellers: Record<string, { registered: number; tooMany: number }> };
      expect(stats.sellers[seller]).toMatchObject({ tooMany: 0 });
      expect(stats.sellers[seller]!.registered).toBe(7 + uploads.find((u) => u.uploadId === second)!.registered);
    } finally {
      expect(await pool.stop('SIGTERM')).toBe(0);
    }
  }, 120_000);

  it('is pinned by its first `limits set`, whose rule its uploads then use', async () => {
    const seller = 'PIN2';
    const r = await runCli(['limits', 'set', seller, '5', '--window-ms', '1000'], env(6));
    expect(r.code, r.stderr).toBe(0);
    const pinned = shardOf(seller, shardPrefixes(PREFIX, 6));
    expect(await redis.get(homeKey(NS, seller))).toBe(pinned);
    expect(await redis.get(sellerKeys(NS, seller, tagOf(pinned)).rule)).toBe('5/1000');
    const uploadId = await upload('seller-c-7.xlsx', seller, 3);
    expect(await queueOf(seller, uploadId)).toBe(pinned);
    const status = await runCli(['status', '--seller', seller, '--json'], env(3));
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { sellers: Array<{ limit: number }> }).sellers[0]?.limit).toBe(5);
  });

  it('leaves a seller with keys under its own tag from before pins existed where it is', async () => {
    const seller = 'PIN3';
    // as an earlier version's `limits set` left it
    await redis.set(sellerKeys(NS, seller).rule, '5/1000');
    const uploadId = await upload('seller-c-7.xlsx', seller, 6);
    expect(await redis.get(homeKey(NS, seller))).toBe('');
    expect(await homeOf(redis, NS, seller)).toBe(seller);
    expect(await redis.hget(uploadKeys(NS, seller, uploadId).upload, 'total')).toBe('7');
    // and one whose upload from before is still kept (its counters under its own tag, in the index)
    const earlier = 'PIN4';
    await redis.hset(uploadKeys(NS, earlier, 'old-upload').upload, { sellerId: earlier, uploadId: 'old-upload', total: 1, registered: 1 });
    await redis.zadd(uploadIndexKey(NS), Date.now(), `${earlier}/old-upload`);
    await upload('seller-c-7.xlsx', earlier, 6);
    expect(await redis.get(homeKey(NS, earlier))).toBe('');
    const status = await runCli(['status', '--seller', earlier, '--json'], env(6));
    expect((JSON.parse(status.stdout) as { uploads: Array<{ uploadId: string }> }).uploads.map((u) => u.uploadId)).toContain('old-upload');
  });
});
