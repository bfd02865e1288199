/**
 * The whole pipeline (upload, pool, limiter, status) on a real 3-master Redis
 * Cluster through REDIS_CLUSTER_NODES.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { FIXTURES_DIR } from '../../src/paths.js';
import { freePort } from '../helpers/redis-server.js';
import { baseEnv, runCli, startCli, type Running, poolReady } from '../helpers/cli.js';
import { startCluster, type TestCluster } from '../helpers/redis-cluster.js';

let cluster: TestCluster;
let api: Running;
let env: NodeJS.ProcessEnv;
let apiUrl: string;
const pools: Running[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  env = baseEnv({
    REDIS_CLUSTER_NODES: cluster.seeds, REGISTRATION_API_URL: apiUrl, QUEUE_PREFIX: '{cluster-q}',
    RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '50', SHUTDOWN_TIMEOUT_MS: '10000',
  });
  api = startCli(['mock-api', '--port', String(port)], { ...env, MOCK_LATENCY_MS: '2-20' });
  await api.waitFor(/mock registration API listening/);
});
afterAll(async () => {
  for (const p of pools) await p.stop('SIGKILL');
  await api?.stop();
  await cluster?.stop();
});

describe('Redis Cluster', () => {
  it('runs upload, pool, limiter and status on 3 masters, with sellers in different slots', async () => {
    const pool = startCli(['workers', '--processes', '3'], env);
    pools.push(pool);
    await poolReady(pool, 3, 30_000);
    const a = await runCli(['upload', join(FIXTURES_DIR, 'seller-b-60-korean.xlsx'), '--seller', 'S1', '--json'], env);
    const b = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S2', '--json'], env);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    const done = await runCli(['status', '--wait', '--json'], env, 120_000);
    expect(done.code).toBe(0);
    const status = JSON.parse(done.stdout);
    expect(status.uploads.map((u: { sellerId: string; registered: number }) => [u.sellerId, u.registered]).sort()).toEqual([['S1', 60], ['S2', 7]]);
    const stats = await (await fetch(`${apiUrl}/_stats`)).json() as { sellers: Record<string, { registered: number; tooMany: number; maxInWindow: number }> };
    expect(stats.sellers.S1).toMatchObject({ registered: 60, tooMany: 0 });
    expect(stats.sellers.S1!.maxInWindow).toBeLessThanOrEqual(20);

    const c = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
    try {
      const s1 = await c.cluster('KEYSLOT', 'cluster-q:rl:{S1}:plan');
      const s2 = await c.cluster('KEYSLOT', 'cluster-q:rl:{S2}:plan');
      expect(s1).not.toBe(s2);
      expect(await c.cluster('KEYSLOT', 'cluster-q:up:{S1}:x')).toBe(s1);
    } finally {
      c.disconnect();
    }
    expect(await pool.stop('SIGTERM')).toBe(0);
  });

  it('refuses a QUEUE_PREFIX without a hash tag in cluster mode, with one sentence', async () => {
    const r = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S3'], { ...env, QUEUE_PREFIX: 'no-tag' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('QUEUE_PREFIX="no-tag" is invalid: in cluster mode (REDIS_CLUSTER_NODES set) it needs a hash tag in braces, such as {bulk-register}, so that each queue\'s keys share one slot.');
  });
});
