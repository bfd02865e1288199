/**
 * "Enqueued" means on a replica. When the master has replicas, the producer's
 * writes (the upload's counters and BullMQ's jobs, each on its own connection)
 * are confirmed with Redis WAIT by at least one replica before the rows are
 * reported as enqueued. With no replica (a single Redis) nothing is waited for.
 * Not for Redis Cluster: WAIT there covers one node's writes only.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RedisClient } from '../redis.js';
import type { RegistrationJob } from '../queue.js';

/** How long `upload` waits for a replica to confirm its rows (ms). */
export const REPLICA_WAIT_MS = 2000;

/** The rows are on the master, but no replica confirmed them within the bound. */
export class NotReplicated extends Error {
  override readonly name = 'NotReplicated';
}

async function replicasOf(client: Redis): Promise<number> {
  const m = /connected_slaves:(\d+)/.exec(await client.info('replication'));
  return Number(m?.[1] ?? 0);
}

/**
 * Waits until at least one replica has every write made so far on both connections.
 * @returns the master's replicas (0: nothing was waited for)
 * @throws NotReplicated when a replica exists but none confirmed within `timeoutMs`
 */
export async function confirmOnReplica(redis: RedisClient, queue: Queue<RegistrationJob>, timeoutMs = REPLICA_WAIT_MS): Promise<number> {
  if (!('info' in redis) || (redis as { isCluster?: boolean }).isCluster) return 0;
  const single = redis as unknown as Redis;
  const replicas = await replicasOf(single);
  if (replicas === 0) return 0;
  const queueClient = (await (queue.getBackend() as unknown as { client: Promise<Redis> }).client);
  // WAIT covers the connection's own writes; a re-upload (alreadyUploaded) wrote none, and
  // must not be confirmed by a replica that never had the first one: a write of nothing
  // (PUBLISH is replicated) makes the WAIT cover every write the master made before it
  await single.publish('bulk-register:replica-check', '');
  const acked = await Promise.all([single.wait(1, timeoutMs), queueClient.wait(1, timeoutMs)]);
  if (Math.min(...acked) < 1) {
    throw new NotReplicated(
      `the rows were written to the Redis master, but none of its ${replicas} replica(s) confirmed them within ${timeoutMs} ms, so a failover now could lose them: check the replica, then upload the file again (nothing is enqueued twice).`,
    );
  }
  return replicas;
}
