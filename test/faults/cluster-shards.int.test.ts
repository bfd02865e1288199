/**
 * Queue shards on a real 3-master Redis Cluster: with QUEUE_SHARDS=6 the
 * queues sit on every master and each master's share of the commands stays
 * within ±30 % of the mean (120 equal sellers); with QUEUE_SHARDS=1 the
 * queue's master carries most of them. Every row registered once, no 429,
 * and status shows all shards as one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { namespaceOf, uploadKeys } from '../../src/keys.js';
import { QueueSet, resolveShardPrefixes } from '../../src/queue.js';
import { keySlot } from '../../src/queue-shards.js';
import { bullConnection, connectChecked, createRedis } from '../../src/redis.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';
import { homeOf } from '../../src/seller-home.js';
import { baseEnv, runCli, startCli, type Running, poolReady } from '../helpers/cli.js';
import { freePort } from '../helpers/redis-server.js';
import { startCluster, type TestCluster } from '../helpers/redis-cluster.js';

const SELLERS = 120;
const ROWS = 5;
let cluster: TestCluster;
let api: Running;
let apiUrl: string;

beforeAll(async () => {
  cluster = await startCluster();
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  api = startCli(['mock-api', '--port', String(port)], baseEnv({ RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '1000', MOCK_LATENCY_MS: '2-10' }));
  await api.waitFor(/mock registration API listening/);
});
afterAll(async () => {
  await api?.stop();
  await cluster?.stop();
});

async function commandsPerNode(): Promise<number[]> {
  return Promise.all(cluster.nodes.map(async (n) => {
    const c = new Redis({ port: n.port, host: '127.0.0.1' });
    try {
      const stats = await c.info('commandstats');
      return [...stats.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce((s, m) => s + Number(m[1]), 0);
    } finally {
      c.disconnect();
    }
  }));
}

/** Uploads SELLERS x ROWS, runs a pool until done; returns each master's share of the commands (÷ the mean). */
async function run(shards: number, tag: string): Promise<{ shares: number[]; queues: number; callsPerRow: number; aheadPerRow: number; status: { uploads: Array<{ registered: number; done: boolean }> } }> {
  const envVars = {
    REDIS_CLUSTER_NODES: cluster.seeds, REGISTRATION_API_URL: apiUrl, QUEUE_PREFIX: `{${tag}}`, QUEUE_SHARDS: String(shards),
    RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '50', SHUTDOWN_TIMEOUT_MS: '10000',
  };
  const env = baseEnv(envVars);
  const config = loadConfig(env);
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  const connection = bullConnection(config, 'cli');
  const queues = QueueSet.on(connection, resolveShardPrefixes(config, redis as never));
  const pool = startCli(['workers', '--processes', '3', '--concurrency', '4'], env);
  try {
    await poolReady(pool, 3, 30_000);
    const before = await commandsPerNode();
    const sheets = await Promise.all(Array.from({ length: SELLERS }, async (_, i) =>
      parseSheetBytes(await buildProductSheet(sampleProducts(`${tag}${i}`, ROWS)), `s${i}.xlsx`)));
    const uploads = [];
    for (let i = 0; i < SELLERS; i++) uploads.push(await enqueueUpload({ redis, queues, config, now: Date.now }, `${tag}-seller-${i}`, sheets[i]!));
    const done = await runCli(['status', '--wait', '--json'], env, 120_000);
    expect(done.code).toBe(0);
    const after = await commandsPerNode();
    // the pool's own count of limiter calls (its /metrics)
    const port = /"port":(\d+)[^\n]*metrics listening/.exec(pool.output())?.[1];
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const calls = Number(/^bulk_register_limiter_calls_total (\d+)/m.exec(metrics)?.[1]);
    const ahead = Number(/^bulk_register_permits_ahead_total (\d+)/m.exec(metrics)?.[1]);
    const used = after.map((a, i) => a - before[i]!);
    const mean = used.reduce((s, x) => s + x, 0) / used.length;
    // each upload recorded its shard, and its seller's uploads stay on it
    const ns = namespaceOf(config.queuePrefix);
    const recorded = await redis.hget(uploadKeys(ns, `${tag}-seller-0`, uploads[0]!.uploadId, await homeOf(redis, ns, `${tag}-seller-0`)).upload, 'queue');
    expect(recorded).toBe(uploads[0]!.queuePrefix);
    return { callsPerRow: calls / (SELLERS * ROWS), aheadPerRow: ahead / (SELLERS * ROWS), shares: used.map((u) => Math.round((u / mean) * 100) / 100), queues: new Set(uploads.map((u) => u.queuePrefix)).size, status: JSON.parse(done.stdout) };
  } finally {
    expect(await pool.stop('SIGTERM')).toBe(0);
    await queues.close();
    connection.disconnect();
    redis.disconnect();
  }
}

describe('queue shards on Redis Cluster', () => {
  it('spread the commands over every master (6 shards), where one shard loads one master', async () => {
    const six = await run(6, 'spread6');
    const one = await run(1, 'spread1');
    process.stdout.write(`[shards] commands per master ÷ mean, ${SELLERS} sellers x ${ROWS} rows: QUEUE_SHARDS=6 ${six.shares.join(' / ')}; QUEUE_SHARDS=1 ${one.shares.join(' / ')}; limiter calls per row ${six.callsPerRow} and ${one.callsPerRow}\n`);
    expect(six.callsPerRow).toBeGreaterThanOrEqual(1);
    expect(six.callsPerRow).toBeLessThanOrEqual(2);
    // the sellers are pinned to their shards: permits ride in the write that finished the row
    // before (none could before pins). How many depends on whether a completion finds a next job:
    // the uploads arrive one by one while the pool runs, so 0.31-0.85 in 12 readings (6 runs) here
    process.stdout.write(`[shards] permits asked ahead per row: QUEUE_SHARDS=6 ${six.aheadPerRow}, QUEUE_SHARDS=1 ${one.aheadPerRow}\n`);
    expect(six.aheadPerRow).toBeGreaterThan(0.1);
    expect(one.aheadPerRow).toBeGreaterThan(0.1);
    for (const r of [six, one]) {
      expect(r.status.uploads).toHaveLength(SELLERS);
      expect(r.status.uploads.every((u) => u.done && u.registered === ROWS)).toBe(true);
    }
    expect(six.queues).toBe(6);
    for (const share of six.shares) {
      expect(share).toBeGreaterThanOrEqual(0.7);
      expect(share).toBeLessThanOrEqual(1.3);
    }
    expect(Math.max(...one.shares)).toBeGreaterThan(1.3);
    const stats = (await (await fetch(`${apiUrl}/_stats`)).json()) as { totals: { registered: number; tooMany: number; duplicates: number } };
    expect(stats.totals).toMatchObject({ registered: 2 * SELLERS * ROWS, tooMany: 0, duplicates: 0 });
  });

  it('places the 6 shards in 6 slot ranges, 2 per master of an evenly split cluster', () => {
    const slots = resolveShardPrefixes(loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:1', QUEUE_SHARDS: '6' }), {}).map((p) => keySlot(p));
    expect(slots.map((s) => Math.floor((s * 3) / 16384)).sort()).toEqual([0, 0, 1, 1, 2, 2]);
  });
});
