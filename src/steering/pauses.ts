/**
 * Paused sellers (cli.md "Steering uploads", marketplace.md "Tokens and refusals"),
 * kept in Redis so that a pause survives restarts of the pool and a failover:
 *
 * - `{ns}:steer` (steer-key.ts), fields `pause:<sellerId>` (or `pause:*`: every seller)
 *   -> JSON { reason, by, since, fp? }
 * - `{ns}:held:{sellerId}` set  `{queue prefix}\t{jobId}` of the seller's rows moved
 *   aside while paused (delayed, no attempt used); `{ns}:held` set: sellers with such rows.
 *
 * Each worker process reads the hash every PAUSE_POLL_MS (pause-watch.ts: one HGETALL,
 * which also brings the cancelled uploads and the API's outage) and checks
 * it before asking for a permit and again right before a call leaves: once
 * `pause` returns, no new call for the seller leaves after PAUSE_POLL_MS plus a
 * round trip. A resume promotes the held rows at once; a row whose promotion
 * is missed looks again after HELD_RECHECK_MS.
 */
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import type { QueueSet } from '../queue.js';
import { promoteIfDelayed, queuedRow } from '../queued-row.js';
import { QUEUE_NAME } from '../keys.js';
import { PAUSE, steerKey } from './steer-key.js';
import { stripControls } from '../excel/cell-rules.js';

export const PAUSE_POLL_MS = 100;
/** How long a held row stays delayed when no resume promotes it (ms): it then looks again. */
export const HELD_RECHECK_MS = 30_000;

export const ALL = '*';
/** The longest pause reason kept (characters). */
export const REASON_MAX = 200;

/**
 * An operator's reason as it is kept and shown (CLI and console alike): one line without
 * control characters, at most REASON_MAX characters, "no reason given" when empty.
 * `cut`: whether it was shortened.
 */
export function pauseReason(given: string | undefined): { reason: string; cut: boolean } {
  const text = stripControls((given ?? '').replace(/[\r\n\t]+/g, ' ')).trim();
  return { reason: text.slice(0, REASON_MAX).trim() || 'no reason given', cut: text.length > REASON_MAX };
}

export interface Pause {
  reason: string;
  by: 'operator' | 'credentials';
  /** ms since the epoch. */
  since: number;
  /** For a credentials pause: the fingerprint of the credentials refused (a change of them resumes). */
  fp?: string;
  /** For every seller's pause: the sellers resumed one by one since, which go on while the rest stay paused. */
  except?: string[];
}

/**
 * `{ns}:pause-events` (list of JSON): every pause set and every pause lifted, appended where it
 * happens, for the pool's notifications (steering/webhooks.ts), which take them in order. A
 * pause lifted a moment after it was set is told too (comparing the pauses once a second missed
 * it), and so is one seller resumed while everyone stays paused. At most PAUSE_EVENTS_KEPT are kept.
 */
export const pauseEventsKey = (ns: string) => `${ns}:pause-events`;
export const PAUSE_EVENTS_KEPT = 10_000;
export interface PauseEvent {
  type: 'seller.paused' | 'seller.resumed';
  sellerId: string;
  /** The pause set, or the one lifted. */
  pause: Pause;
  /** When it was set or lifted (ms since the epoch); absent in events noted by an earlier version. */
  at?: number;
}

async function notePauseEvent(redis: RedisClient, ns: string, event: PauseEvent): Promise<void> {
  const { except: _except, ...pause } = event.pause;
  await redis.multi().rpush(pauseEventsKey(ns), JSON.stringify({ ...event, pause, at: event.at ?? Date.now() })).ltrim(pauseEventsKey(ns), -PAUSE_EVENTS_KEPT, -1).exec();
}

export const heldKey = (ns: string, sellerId: string) => `${ns}:held:{${sellerId}}`;
export const heldIndexKey = (ns: string) => `${ns}:held`;

function parsePause(json: string | null | undefined): Pause | undefined {
  if (!json) return undefined;
  try {
    const p = JSON.parse(json) as Pause;
    return typeof p?.reason === 'string' ? p : undefined;
  } catch {
    return undefined;
  }
}

/** The pauses among the steering hash's fields. */
export function pausesIn(all: Record<string, string>): Map<string, Pause> {
  const out = new Map<string, Pause>();
  for (const [k, v] of Object.entries(all)) {
    if (!k.startsWith(PAUSE)) continue;
    const p = parsePause(v);
    if (p) out.set(k.slice(PAUSE.length), p);
  }
  return out;
}

export async function readPauses(redis: RedisClient, ns: string): Promise<Map<string, Pause>> {
  return pausesIn(await redis.hgetall(steerKey(ns)));
}

/** The pause in force for a seller: its own, else everyone's unless the seller was resumed since. */
export function pauseOf(pauses: ReadonlyMap<string, Pause>, sellerId: string): Pause | undefined {
  const own = pauses.get(sellerId);
  if (own) return own;
  const everyone = pauses.get(ALL);
  return everyone && !everyone.except?.includes(sellerId) ? everyone : undefined;
}

/**
 * Pauses a seller (or every seller with ALL). An operator's pause replaces any
 * earlier one; a credentials pause never replaces an operator's. Returns the
 * pause in force and whether this call set it.
 */
export async function pauseSeller(redis: RedisClient, ns: string, sellerId: string, pause: Pause): Promise<{ pause: Pause; changed: boolean }> {
  const json = JSON.stringify(pause);
  if (pause.by === 'operator') {
    const before = parsePause(await redis.hget(steerKey(ns), PAUSE + sellerId));
    await redis.hset(steerKey(ns), PAUSE + sellerId, json);
    const changed = before?.reason !== pause.reason || before?.by !== pause.by;
    if (changed) await notePauseEvent(redis, ns, { type: 'seller.paused', sellerId, pause });
    return { pause, changed };
  }
  const set = await redis.hsetnx(steerKey(ns), PAUSE + sellerId, json);
  if (set === 1) {
    await notePauseEvent(redis, ns, { type: 'seller.paused', sellerId, pause });
    return { pause, changed: true };
  }
  return { pause: parsePause(await redis.hget(steerKey(ns), PAUSE + sellerId)) ?? pause, changed: false };
}

/**
 * Lifts a seller's pause (with ALL: every pause, everyone's and each seller's), whoever set it, and releases
 * the rows held aside that are no longer paused. While every seller is paused, a seller resumed on its own
 * goes on and the others stay paused (it joins the pause's `except`, which a new pause of everyone clears).
 * Returns the pause lifted, if any (everyone's, when only that held the seller).
 * `onlyIf`: lift only a pause whose JSON is exactly this (a credentials pause seen
 * by the caller), so that a newer pause is never lifted by mistake.
 */
export async function resumeSeller(
  redis: RedisClient, ns: string, sellerId: string, queues: QueueSet | undefined, log?: Logger, onlyIf?: Pause,
): Promise<Pause | undefined> {
  if (sellerId === ALL) {
    // every pause: everyone's and each seller's own
    const all = await readPauses(redis, ns);
    if (all.size > 0) await redis.hdel(steerKey(ns), ...[...all.keys()].map((id) => PAUSE + id));
    for (const [id, was] of all) await notePauseEvent(redis, ns, { type: 'seller.resumed', sellerId: id, pause: was });
    if (queues) await releaseHeld(redis, ns, undefined, queues, log);
    return all.get(ALL) ?? all.values().next().value;
  }
  const [json, everyoneJson] = await redis.hmget(steerKey(ns), PAUSE + sellerId, PAUSE + ALL);
  if (json && onlyIf && JSON.stringify(onlyIf) !== json) return undefined;
  const pause = parsePause(json);
  if (json && pause && (await redis.hdel(steerKey(ns), PAUSE + sellerId)) === 1) {
    await notePauseEvent(redis, ns, { type: 'seller.resumed', sellerId, pause });
  }
  // an operator's resume of one seller while everyone is paused: that seller goes on
  const everyone = onlyIf ? undefined : parsePause(everyoneJson);
  let exempted: Pause | undefined;
  if (everyone && !everyone.except?.includes(sellerId)) {
    exempted = { ...everyone, except: [...(everyone.except ?? []), sellerId] };
    await redis.hset(steerKey(ns), PAUSE + ALL, JSON.stringify(exempted));
    // the seller is resumed from everyone's pause, which goes on for the others
    if (!pause) await notePauseEvent(redis, ns, { type: 'seller.resumed', sellerId, pause: everyone });
  }
  if (queues) await releaseHeld(redis, ns, [sellerId], queues, log);
  return pause ?? exempted;
}

/** Notes a row held aside for its seller's pause (before its job is delayed). */
export async function noteHeld(redis: RedisClient, ns: string, sellerId: string, queueQualifiedName: string, jobId: string): Promise<void> {
  const prefix = queueQualifiedName.endsWith(`:${QUEUE_NAME}`) ? queueQualifiedName.slice(0, -QUEUE_NAME.length - 1) : queueQualifiedName;
  await Promise.all([
    redis.sadd(heldKey(ns, sellerId), queuedRow(prefix, jobId)),
    redis.sadd(heldIndexKey(ns), sellerId),
  ]);
}

/**
 * Promotes the held rows of `sellers` (undefined: every seller with held rows)
 * that are not paused any more. Each is taken off its set before it is promoted
 * (SPOP): a row noted while this runs is either promoted or stays for the next.
 */
export async function releaseHeld(redis: RedisClient, ns: string, sellers: string[] | undefined, queues: QueueSet, log?: Logger): Promise<number> {
  let released = await releaseOnce(redis, ns, sellers, queues, log, true);
  // A process that read the pauses just before the resume may still hold a row for up to
  // PAUSE_POLL_MS, and on a busy host a row it took just before may be held later still:
  // two more sweeps, once every process has read the resume and a second after, release
  // those too (a row missed by all three comes back after HELD_RECHECK_MS by itself).
  await new Promise((r) => setTimeout(r, PAUSE_POLL_MS + 100));
  released += await releaseOnce(redis, ns, sellers, queues, log, true);
  await new Promise((r) => setTimeout(r, 1000));
  return released + (await releaseOnce(redis, ns, sellers, queues, log, false));
}

/** @param keepUnsettled put back a row noted as held but not delayed yet (being held now), for the next sweep */
async function releaseOnce(redis: RedisClient, ns: string, sellers: string[] | undefined, queues: QueueSet, log: Logger | undefined, keepUnsettled: boolean): Promise<number> {
  const pauses = await readPauses(redis, ns);
  const candidates = sellers ?? (await redis.smembers(heldIndexKey(ns)));
  let released = 0;
  for (const sellerId of candidates) {
    if (pauseOf(pauses, sellerId)) continue;
    const unsettled: string[] = [];
    for (;;) {
      const batch = (await redis.spop(heldKey(ns, sellerId), 500)) as string[];
      if (!batch || batch.length === 0) break;
      await Promise.all(batch.map(async (entry) => {
        try {
          const state = await promoteIfDelayed(queues, entry);
          if (state === 'delayed') released++;
          // noted, not delayed yet: a process is holding it this moment
          else if (keepUnsettled && state === 'active') unsettled.push(entry);
        } catch (err) {
          // already promoted or started: nothing to do
          log?.debug({ err, row: entry }, 'a held row was no longer delayed');
        }
      }));
    }
    // put back after the set is empty (SPOP would take them again at once)
    if (unsettled.length > 0) await redis.sadd(heldKey(ns, sellerId), ...unsettled);
    else await redis.srem(heldIndexKey(ns), sellerId);
  }
  return released;
}
