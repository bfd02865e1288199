/**
 * "Enqueued" means on a replica, on Redis Cluster too: 3 masters with a replica
 * each, real processes. WAIT is asked of the master holding the seller's pin
 * (seller-home.ts) and of the one holding its queue shard and, under the
 * shard's tag, its upload's keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { baseEnv, runCli } from '../helpers/cli.js';
import { startReplicatedCluster, type ReplicatedCluster } from '../helpers/redis-cluster.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { shardOf, shardPrefixes } from '../../src/queue-shards.js';
import { tagOf } from '../../src/seller-home.js';

let cluster: ReplicatedCluster;
let env: NodeJS.ProcessEnv;
const PREFIX = '{durable-c}';
// the cluster default on 3 masters: 6 shards
const prefixes = shardPrefixes(PREFIX, 6);

beforeAll(async () => {
  cluster = await startReplicatedCluster();
  env = baseEnv({ REDIS_CLUSTER_NODES: cluster.seeds, QUEUE_PREFIX: PREFIX });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

/** A read on a replica (READONLY: a cluster replica serves its master's slots). */
async function onReplica<T>(port: number, read: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.call('READONLY');
    return await read(c);
  } finally {
    c.disconnect();
  }
}

const upload = (file: string, seller: string) => runCli(['upload', join(FIXTURES_DIR, file), '--seller', seller, '--json'], env);

describe('upload on Redis Cluster with replicas', () => {
  it('reports rows as enqueued once the replicas of the seller\'s master and of its queue shard\'s master have them', async () => {
    const r = await upload('seller-c-7.xlsx', 'CR1');
    expect(r.code, r.stderr).toBe(0);
    const { uploadId, enqueued } = JSON.parse(r.stdout) as { uploadId: string; enqueued: number };
    expect(enqueued).toBe(7);
    // the seller's master holds its pin; its queue shard's master its jobs and, under the shard's tag, its upload's keys
    const seller = await cluster.shardOf('{CR1}');
    const shard = shardOf('CR1', prefixes);
    const queue = await cluster.shardOf(`${shard}:registrations:wait`);
    expect(await onReplica(seller.replica.port, (c) => c.get('durable-c:home:{CR1}'))).toBe(shard);
    expect(await onReplica(queue.replica.port, (c) => c.hget(`durable-c:up:{${tagOf(shard)}}:CR1:${uploadId}`, 'total'))).toBe('7');
    expect(await onReplica(queue.replica.port, (c) => c.exists(`${shard}:registrations:${uploadId}-8`))).toBe(1);
  });

  for (const side of ['seller', 'queue'] as const) {
    it(`says so in one sentence, with exit 4, when the replica of the ${side === 'seller' ? "seller's" : "queue shard's"} master does not confirm`, async () => {
      const seller = `CR-${side}`;
      const { replica } = side === 'seller' ? await cluster.shardOf(`{${seller}}`) : await cluster.shardOf(`${shardOf(seller, prefixes)}:registrations:wait`);
      replica.process.kill('SIGSTOP');
      try {
        const started = Date.now();
        const r = await upload('seller-c-7.xlsx', seller);
        expect(r.code, r.stderr).toBe(4);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/^The rows were written to the Redis master, but none of its 1 replica\(s\) confirmed them within 2000 ms.*upload the file again \(nothing is enqueued twice\)\.\n$/);
        expect(Date.now() - started).toBeLessThan(15_000);
      } finally {
        replica.process.kill('SIGCONT');
      }
      // uploaded again once the replica is back: the same rows, confirmed, none enqueued twice
      const again = await upload('seller-c-7.xlsx', seller);
      expect(again.code, again.stderr).toBe(0);
    }, 60_000);
  }
});
