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
 * grant acknowledged to them. If one is missing, no seller on that master (its
 * slot ranges) sends until one whole window (the longest rule) has passed, plus
 * CLOCK_MARGIN_MS, since the masters' clocks are different hosts' clocks; the
 * sellers on the other masters go on. The until-time is recorded per slot
 * range (in lost-writes.ts's record), so every process keeps to it. The cost is
 * a window's pause for one master's sellers after its lossy failover, never a 429.
 */
import { epochKey, type LastGrant } from './lost-writes.js';
import { keySlot } from '../queue-shards.js';
import { redisTimeMs, type RedisClient } from '../redis.js';

export const CLOCK_MARGIN_MS = 1000;
/** A slot range, both ends included. */
export type SlotRange = [number, number];
/** Fields of the record (epochKey) that hold a slot range's until-time: `suspect:<from>-<to>`. */
const FIELD = 'suspect:';

/** One call on the seller's slot: that master's clock, and whether the send is still recorded. */
const CHECK = `
local t = redis.call('TIME')
return { tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), redis.call('ZSCORE', KEYS[1], ARGV[1]) and 1 or 0 }`;

/** ARGV[1]: until (Redis ms); ARGV[2..]: the ranges "<from>-<to>". Each range's time only moves later; passed ones are dropped. */
const RECORD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, ${FIELD.length}) == '${FIELD}' and tonumber(all[i + 1]) < now - 60000 then redis.call('HDEL', KEYS[1], all[i]) end
end
for i = 2, #ARGV do
  local field = '${FIELD}' .. ARGV[i]
  redis.call('HSET', KEYS[1], field, math.max(tonumber(redis.call('HGET', KEYS[1], field) or '0'), tonumber(ARGV[1])))
end
return 1`;

export interface LostGrants {
  /** Until when (Redis ms, the master's clock) the master's sellers may not send. */
  until: number;
  /** The grant found missing, and the slot ranges of the master that lost it. */
  missing: LastGrant;
  ranges: SlotRange[];
}

/**
 * Checks this process's recent grants (those within `spanMs` of their master's
 * clock), and records the slot ranges of every master that lost one.
 * @param rangesOf the slot ranges of the master that serves a key now
 */
export async function checkClusterGrants(
  redis: RedisClient, ns: string, spanMs: number, grants: Iterable<LastGrant>, rangesOf: (key: string) => SlotRange[],
): Promise<LostGrants[]> {
  const found: LostGrants[] = [];
  const known = (slot: number) => found.some((f) => f.ranges.some(([a, b]) => slot >= a && slot <= b));
  for (const grant of [...grants].reverse()) {
    if (known(keySlot(grant.sent))) continue;
    const [now, recorded] = (await redis.eval(CHECK, 1, grant.sent, grant.sendId)) as [number, number];
    if (grant.at <= now - spanMs) continue; // out of the window: it no longer counts against the rule
    if (recorded === 1) continue;
    const ranges = rangesOf(grant.sent);
    const until = now + spanMs + CLOCK_MARGIN_MS;
    await redis.eval(RECORD, 1, epochKey(ns), until, ...ranges.map(([a, b]) => `${a}-${b}`));
    found.push({ until, missing: grant, ranges });
  }
  return found;
}

/**
 * What the record holds, with its until-times still ahead: the slot ranges whose
 * masters any worker found missing writes, and the one time for every seller
 * that a worker of an earlier version records (0: none).
 */
export async function recordedSlotSuspects(redis: RedisClient, ns: string): Promise<{ ranges: Array<{ range: SlotRange; until: number }>; all: number }> {
  const [record, time] = await Promise.all([redis.hgetall(epochKey(ns)), redis.time()]);
  const now = redisTimeMs(time);
  const all = Number(record.suspectUntil ?? 0);
  const ranges = Object.entries(record).filter(([field, until]) => field.startsWith(FIELD) && Number(until) > now).map(([field, until]) => {
    const [a, b] = field.slice(FIELD.length).split('-').map(Number);
    return { range: [a!, b!] as SlotRange, until: Number(until) };
  });
  return { ranges, all: all > now ? all : 0 };
}

/** The slot ranges served by the master that serves `slot` (ioredis's `cluster.slots`: slot -> node keys, master first). */
export function masterRanges(slots: ReadonlyArray<ReadonlyArray<string> | undefined>, slot: number): SlotRange[] {
  const owner = slots[slot]?.[0];
  if (owner === undefined) return [[slot, slot]];
  const ranges: SlotRange[] = [];
  for (let s = 0; s < slots.length; s++) {
    if (slots[s]?.[0] !== owner) continue;
    const last = ranges.at(-1);
    if (last && last[1] === s - 1) last[1] = s;
    else ranges.push([s, s]);
  }
  return ranges;
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
