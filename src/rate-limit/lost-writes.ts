/**
 * A Redis that lost its last writes (a failover to a replica that was behind, a
 * restart from an AOF that lacked its last second) may have lost the limiter's
 * records of sends: it would then let a seller send more than L in a window.
 *
 * Checked on every (re)connect of a worker, before it asks for a permit:
 * - Did writes go missing? The worker's own last granted send (acknowledged to
 *   it, made within the window) must still be in the seller's `sent` set. Redis
 *   replicates and logs writes in order, so if that write survived, every write
 *   made before it did too; each worker vouches for the writes up to its own
 *   last grant, and the pool's workers together for every acknowledged grant.
 *   With the record itself gone (a restart that kept nothing), the master this
 *   process saw before differs: writes went missing too.
 * - Did the master change (its run id or replication id differs from the one
 *   recorded in `{ns}:redis-epoch`)? Then every worker holds its sends for
 *   SETTLE_MS from the change, so that the workers that reconnect a little later
 *   can report a grant of theirs that went missing before anyone sends.
 * If writes went missing, no seller may send until one whole window (W + G,
 * the longest rule in force) has passed since: the lost sends all lie before
 * that moment. The cost is one window's pause, never a 429. A failover to a
 * replica that was in sync (or a restart that kept everything) costs only the
 * settling time. The until-time is recorded, so a worker that starts later,
 * or checks again, keeps to it too.
 *
 * Single Redis and Sentinel: the run id and replication id are the master's. Not
 * done on Redis Cluster (each master would need its own record; see docs/how-it-works.md, "Lost-write detection").
 * Not covered: a grant acknowledged to a worker process that died in the same
 * fault (no one vouches for it).
 */
import { limitIndexKey, sellerKeys } from '../keys.js';
import { redisTimeMs, type RedisClient } from '../redis.js';
import { parseRule } from './seller-limits.js';

export const epochKey = (ns: string) => `${ns}:redis-epoch`;

/** After a master change, how long every worker holds its sends while the others check (ms). */
export const SETTLE_MS = 2500;

/** The last send a worker was granted: the seller's `sent` key, the send id, and when (Redis ms). */
export interface LastGrant {
  sent: string;
  sendId: string;
  at: number;
}

export interface Epoch {
  runId: string;
  replId: string;
  now: number;
}

/**
 * Whether this Redis lost writes, and whether its master changed, from the
 * recorded epoch, the current one and this worker's own evidence (pure).
 * @param ownGrantLost this worker's last grant within the window is not in Redis
 */
export function judge(
  recorded: Record<string, string>, current: Epoch, ownGrantLost: boolean, seenBefore?: Pick<Epoch, 'runId' | 'replId'>,
): { lost: boolean; changed: boolean } {
  const same = (e: Pick<Epoch, 'runId' | 'replId'>) => e.runId === current.runId && e.replId === current.replId;
  if (recorded.runId === undefined) {
    // no record: a new Redis, or one that lost everything while this process ran
    const wiped = seenBefore !== undefined && !same(seenBefore);
    return { lost: wiped || ownGrantLost, changed: wiped };
  }
  return { lost: ownGrantLost, changed: !same({ runId: recorded.runId, replId: recorded.replId ?? '' }) };
}

/**
 * Records the check atomically: the epoch, a later until-time (never an earlier
 * one: another worker's report stands), and when the master changed.
 * Returns [until, changedAt].
 */
const RECORD = `
local rec = redis.call('HMGET', KEYS[1], 'suspectUntil', 'changedAt')
local untilMs = math.max(tonumber(rec[1] or '0'), tonumber(ARGV[3]))
local changedAt = tonumber(rec[2] or '0')
if ARGV[5] == '1' then changedAt = math.max(changedAt, tonumber(ARGV[4])) end
redis.call('HSET', KEYS[1], 'runId', ARGV[1], 'replId', ARGV[2], 'suspectUntil', untilMs, 'changedAt', changedAt)
return { untilMs, changedAt }`;

async function epochOf(redis: RedisClient): Promise<Epoch> {
  const [server, replication, time] = await Promise.all([redis.info('server'), redis.info('replication'), redis.time()]);
  const field = (text: string, name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
  const now = redisTimeMs(time);
  return { runId: field(server, 'run_id'), replId: field(replication, 'master_replid'), now };
}

/** The longest window + guard in force: the default, or a seller's override. */
async function longestSpan(redis: RedisClient, ns: string, defaultSpanMs: number, guardMs: number): Promise<number> {
  let span = defaultSpanMs;
  for (const seller of await redis.smembers(limitIndexKey(ns))) {
    const w = parseRule(await redis.get(sellerKeys(ns, seller).rule))?.windowMs ?? 0;
    if (w > 0) span = Math.max(span, w + guardMs);
  }
  return span;
}

/**
 * Checks the connected Redis and records its epoch.
 * @param seenBefore the epoch this process saw at its previous check, if any
 * @param lastGrant this process's last granted send, if any
 * @returns until when (Redis ms) no send may go (0: nothing lost, or it has passed),
 *   until when sends are held while the other workers check (0: no change), the
 *   Redis time of the check, and the epoch seen now
 */
export async function checkLostWrites(
  redis: RedisClient, ns: string, windowMs: number, guardMs: number, seenBefore?: Pick<Epoch, 'runId' | 'replId'>, lastGrant?: LastGrant,
): Promise<{ until: number; settleUntil: number; now: number; seen: Pick<Epoch, 'runId' | 'replId'>; why?: string }> {
  const current = await epochOf(redis);
  const span = await longestSpan(redis, ns, windowMs + guardMs, guardMs);
  const recorded = await redis.hgetall(epochKey(ns));
  const ownGrantLost = lastGrant !== undefined && lastGrant.at > current.now - span && (await redis.zscore(lastGrant.sent, lastGrant.sendId)) === null;
  const { lost, changed } = judge(recorded, current, ownGrantLost, seenBefore);
  const [until, changedAt] = (await redis.eval(
    RECORD, 1, epochKey(ns), current.runId, current.replId, lost ? current.now + span : 0, current.now, changed ? 1 : 0,
  )) as [number, number];
  return {
    until: until > current.now ? until : 0,
    settleUntil: changedAt + SETTLE_MS > current.now ? changedAt + SETTLE_MS : 0,
    now: current.now,
    seen: { runId: current.runId, replId: current.replId },
    ...(lost ? { why: ownGrantLost ? `this worker's last grant (${lastGrant!.sendId}, ${current.now - lastGrant!.at} ms ago) is not in Redis` : 'Redis kept nothing, not even its record' } : {}),
  };
}

/** The until-time recorded by any worker's check (0 when none or passed): read by every worker now and then. */
export async function recordedSuspectUntil(redis: RedisClient, ns: string): Promise<{ until: number; now: number }> {
  const [until, time] = await Promise.all([redis.hget(epochKey(ns), 'suspectUntil'), redis.time()]);
  const now = redisTimeMs(time);
  const u = Number(until ?? 0);
  return { until: u > now ? u : 0, now };
}
