/**
 * "Enqueued" means on a replica. When the master has replicas, the producer's
 * writes (the upload's counters and BullMQ's jobs, each on its own connection)
 * are confirmed with Redis WAIT by at least one replica before the rows are
 * reported as enqueued. With no replica (a single Redis) nothing is waited for.
 * On Redis Cluster WAIT covers one node's writes: it is asked of the master
 * that holds the seller's upload keys and of the one that holds the queue
 * shard's jobs, each on the connection that wrote there.
 */
import type { Queue } from 'bullmq';
import { Cluster, type Redis } from 'ioredis';
import { keySlot } from '../queue-shards.js';
import type { RedisClient } from '../redis.js';
import { NotReplicated } from '../redis-errors.js';
import type { RegistrationJob } from '../queue.js';

/** How long `upload` waits for a replica to confirm its rows (ms). */
export const REPLICA_WAIT_MS = 2000;

export { NotReplicated };

async function replicasOf(client: Redis): Promise<number> {
  const m = /connected_slaves:(\d+)/.exec(await client.info('replication'));
  return Number(m?.[1] ?? 0);
}

export function notReplicated(replicas: number, timeoutMs: number): NotReplicated {
  return new NotReplicated(
    `the rows were written to the Redis master, but none of its ${replicas} replica(s) confirmed them within ${timeoutMs} ms, so a failover now could lose them: check the replica, then upload the file again (nothing is enqueued twice).`,
  );
}

/** The connection of `cluster` to the master that serves `key`'s slot now. */
function masterOf(cluster: Cluster, key: string): Redis | undefined {
  const owner = cluster.slots[keySlot(key)]?.[0];
  return cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner);
}

/**
 * Redis Cluster: for each (connection, key), a write of its own in the key's slot (a
 * re-upload wrote nothing there), then WAIT on that connection to the slot's master.
 */
async function confirmOnClusterReplicas(targets: Array<[Cluster, string]>, timeoutMs: number): Promise<number> {
  let most = 0;
  await Promise.all(targets.map(async ([cluster, key]) => {
    await cluster.set(key, '1', 'PX', 60_000);
    const master = masterOf(cluster, key);
    if (!master) return;
    const replicas = await replicasOf(master);
    most = Math.max(most, replicas);
    if (replicas > 0 && (await master.wait(1, timeoutMs)) < 1) throw notReplicated(replicas, timeoutMs);
  }));
  return most;
}

/**
 * Waits until at least one replica has every write made so far on both connections.
 * @param checkKeys on Redis Cluster: a key in the seller's slot and one in the queue
 *   shard's, written and waited for (their masters hold what was enqueued)
 * @returns the master's replicas (0: nothing was waited for)
 * @throws NotReplicated when a replica exists but none confirmed within `timeoutMs`
 */
export async function confirmOnReplica(
  redis: RedisClient, queue: Queue<RegistrationJob>, checkKeys: { seller: string; queue: string }, timeoutMs = REPLICA_WAIT_MS,
): Promise<number> {
  const queueClient = (await (queue.getBackend() as unknown as { client: Promise<Redis | Cluster> }).client);
  if (redis instanceof Cluster && queueClient instanceof Cluster) {
    return confirmOnClusterReplicas([[redis, checkKeys.seller], [queueClient, checkKeys.queue]], timeoutMs);
  }
  if (!('info' in redis) || redis instanceof Cluster || queueClient instanceof Cluster) return 0;
  const single = redis as unknown as Redis;
  const replicas = await replicasOf(single);
  if (replicas === 0) return 0;
  // WAIT covers the connection's own writes; a re-upload (alreadyUploaded) wrote none, and
  // must not be confirmed by a replica that never had the first one: a write of nothing
  // (PUBLISH is replicated) makes the WAIT cover every write the master made before it
  await single.publish('bulk-register:replica-check', '');
  const acked = await Promise.all([single.wait(1, timeoutMs), queueClient.wait(1, timeoutMs)]);
  if (Math.min(...acked) < 1) throw notReplicated(replicas, timeoutMs);
  return replicas;
}
