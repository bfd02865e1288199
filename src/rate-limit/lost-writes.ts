/**
 * A Redis that lost its last writes (a failover to a replica that was behind, a
 * restart from an AOF that lacked its last second) may have lost the limiter's
 * records of sends: it would then let a seller send more than L in a window.
 *
 * Detection, on every (re)connect of a worker: the master's run id or
 * replication id differs from the one recorded in `{ns}:redis-epoch`, or, with
 * the record itself lost (a restart that kept nothing), from the one this worker
 * process saw before. A pool that starts on a brand-new Redis does not wait.
 * Then no seller may send until one whole window (W + G, the longest rule in
 * force) has passed since the change was seen: the sends that may have been lost
 * all lie before that moment. The cost is one window's pause, never a 429.
 * The until-time is recorded, so a worker that starts later keeps to it too.
 *
 * Single Redis and Sentinel: the run id and replication id are the master's. Not
 * done on Redis Cluster (each master would need its own record; see README).
 */
import { limitIndexKey, sellerKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';

export const epochKey = (ns: string) => `${ns}:redis-epoch`;

export interface Epoch {
  runId: string;
  replId: string;
  now: number;
}

/**
 * Until when (Redis ms) sends must wait, from the recorded epoch and the current
 * one (pure). 0: nothing to fear.
 */
export function suspectUntil(recorded: Record<string, string>, current: Epoch, spanMs: number, seenBefore?: Pick<Epoch, 'runId' | 'replId'>): number {
  const kept = Number(recorded.suspectUntil ?? 0);
  const same = (e: Pick<Epoch, 'runId' | 'replId'>) => e.runId === current.runId && e.replId === current.replId;
  if (recorded.runId === undefined) {
    // no record: a new Redis, or one that lost everything while this process ran
    return seenBefore && !same(seenBefore) ? current.now + spanMs : 0;
  }
  if (same({ runId: recorded.runId, replId: recorded.replId ?? '' })) return kept > current.now ? kept : 0;
  return Math.max(kept, current.now + spanMs);
}

async function epochOf(redis: RedisClient): Promise<Epoch> {
  const [server, replication, time] = await Promise.all([redis.info('server'), redis.info('replication'), redis.time()]);
  const field = (text: string, name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  return { runId: field(server, 'run_id'), replId: field(replication, 'master_replid'), now };
}

/** The longest window + guard in force: the default, or a seller's override. */
async function longestSpan(redis: RedisClient, ns: string, defaultSpanMs: number, guardMs: number): Promise<number> {
  let span = defaultSpanMs;
  for (const seller of await redis.smembers(limitIndexKey(ns))) {
    const w = Number(await redis.hget(sellerKeys(ns, seller).limits, 'windowMs'));
    if (w > 0) span = Math.max(span, w + guardMs);
  }
  return span;
}

/**
 * Checks the connected Redis and records its epoch.
 * @param seenBefore the epoch this process saw at its previous check, if any
 * @returns until when (Redis ms) no send may go (0 when nothing was lost), and the epoch seen now
 */
export async function checkLostWrites(
  redis: RedisClient, ns: string, windowMs: number, guardMs: number, seenBefore?: Pick<Epoch, 'runId' | 'replId'>,
): Promise<{ until: number; seen: Pick<Epoch, 'runId' | 'replId'> }> {
  const current = await epochOf(redis);
  const recorded = await redis.hgetall(epochKey(ns));
  const until = suspectUntil(recorded, current, await longestSpan(redis, ns, windowMs + guardMs, guardMs), seenBefore);
  await redis.hset(epochKey(ns), { runId: current.runId, replId: current.replId, suspectUntil: until });
  return { until, seen: { runId: current.runId, replId: current.replId } };
}
