/**
 * Lost writes on Redis Cluster (see lost-writes.ts for a single Redis). Each
 * master fails over on its own, and a replica that was behind takes over
 * without the master's last writes: among them, perhaps, the limiter's records
 * of sends, after which a seller could send more than L in a window.
 *
 * Each worker process keeps, per seller, the last send it was granted
 * (SellerLimiter.grants). When the cluster's masters change (a node dropped,
 * or the slots moved to another node), every process holds its sends, lets
 * the cluster settle, and checks that each of its grants made within the
 * window is still in its seller's `sent` set, on whichever master holds it now.
 * A master replicates its writes in order, so a grant that survived vouches for
 * every earlier write of that master; the processes together vouch for every
 * grant acknowledged to them. If one is missing, no seller sends until one
 * whole window (the longest rule) has passed, plus CLOCK_MARGIN_MS, since the
 * masters' clocks are different hosts' clocks. The until-time is recorded
 * (lost-writes.ts's record), so every process keeps to it. The cost is a
 * window's pause after a lossy failover, never a 429.
 */
import { epochKey, type LastGrant } from './lost-writes.js';
import type { RedisClient } from '../redis.js';

export const CLOCK_MARGIN_MS = 1000;

/** One call on the seller's slot: that master's clock, and whether the send is still recorded. */
const CHECK = `
local t = redis.call('TIME')
return { tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), redis.call('ZSCORE', KEYS[1], ARGV[1]) and 1 or 0 }`;

const RECORD = `
local untilMs = math.max(tonumber(redis.call('HGET', KEYS[1], 'suspectUntil') or '0'), tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'suspectUntil', untilMs)
return untilMs`;

/**
 * Checks this process's recent grants (those within `spanMs` of their master's clock).
 * @returns until when (Redis ms) no seller may send (0: none missing), and the grant found missing
 */
export async function checkClusterGrants(redis: RedisClient, ns: string, spanMs: number, grants: Iterable<LastGrant>): Promise<{ until: number; missing?: LastGrant }> {
  for (const grant of [...grants].reverse()) {
    const [now, recorded] = (await redis.eval(CHECK, 1, grant.sent, grant.sendId)) as [number, number];
    if (grant.at <= now - spanMs) continue; // out of the window: it no longer counts against the rule
    if (recorded === 1) continue;
    const until = (await redis.eval(RECORD, 1, epochKey(ns), now + spanMs + CLOCK_MARGIN_MS)) as number;
    return { until, missing: grant };
  }
  return { until: 0 };
}

/** The masters and the slot ranges they serve, as one comparable text. */
export function masterLayout(slots: ReadonlyArray<ReadonlyArray<string> | undefined>): string {
  const ranges: string[] = [];
  let from = 0;
  for (let slot = 1; slot <= slots.length; slot++) {
    const a = slots[slot - 1]?.[0] ?? '';
    const b = slot < slots.length ? slots[slot]?.[0] ?? '' : undefined;
    if (a !== b) {
      ranges.push(`${from}-${slot - 1}:${a}`);
      from = slot;
    }
  }
  return ranges.join(',');
}
