/**
 * Riding out an API outage (cli.md "Steering uploads", API outages): a circuit
 * breaker shared by every process of the pool through Redis.
 *
 * - Closed: each process watches its own calls. After calls of TRIP_AFTER different
 *   rows in a row with no usable answer (5xx, timeout, refused or dropped connection),
 *   within TRIP_WINDOW_MS, it sets `api-down` ({ since }) in the steering hash
 *   (steer-key.ts) and the whole pool holds:
 *   every process reads the key with the pauses (every PAUSE_POLL_MS). An answer
 *   of any kind (201, 409, 422, 429...) resets the count, and one row's retries
 *   count once, so one bad row or one slow request never trips it.
 * - A row whose last attempt gets no usable answer fails only when the API has
 *   answered other rows while this one was failing (failingVerdict). Otherwise the row
 *   is held as for an outage: with MAX_ATTEMPTS=1, or before the breaker trips, an outage
 *   fails no row. Such rows are also the only ones the streak counts. `{ns}:api-answered`
 *   holds the latest answered row's permit time (`last`) and its answer's time (`answer`), on
 *   Redis's clock, written at most once a second by each process; `{ns}:api-failing` the rows
 *   failing now (until answered or ended), by the permit time of their latest failing call.
 * - Open: rows are held aside as for a pause (no attempt used). Once per
 *   PROBE_EVERY_MS (2 s), one row in the pool (`{ns}:api-probe`, SET NX PX) is sent as a
 *   probe. A usable answer closes the breaker (the key is deleted) and the held
 *   rows are released; a failed probe is held too, without using an attempt.
 *
 * opossum and cockatiel keep a breaker's state in one process's memory; 16
 * processes each tripping on their own would each send their own calls and
 * probes into a dead API, so the state lives in Redis here, read with the
 * pauses at no extra round trip per row.
 */
import { parseRowMember } from '../keys.js';
import type { RedisClient } from '../redis.js';
import type { ApiOutcome } from '../registration/outcome.js';
import { API_DOWN, API_UP, steerKey } from './steer-key.js';

export const TRIP_AFTER = 4;
export const TRIP_WINDOW_MS = 10_000;
export const PROBE_EVERY_MS = 2000;

export const apiProbeKey = (ns: string) => `${ns}:api-probe`;
export const apiAnsweredKey = (ns: string) => `${ns}:api-answered`;
export const apiFailingKey = (ns: string) => `${ns}:api-failing`;
/** How many failing rows `{ns}:api-failing` keeps (the latest), and for how long after the last write (ms). */
const FAILING_KEPT = 100;
const FAILING_TTL_MS = 3_600_000;

export interface ApiDown {
  /** ms since the epoch. */
  since: number;
}

export function parseApiDown(json: string | null | undefined): ApiDown | undefined {
  if (!json) return undefined;
  try {
    const v = JSON.parse(json) as ApiDown;
    return typeof v?.since === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a call's outcome is an answer for the breaker: anything but a transient outcome
 * without an HTTP answer or with a 5xx (a 202 or a 201 without a productId is retried, yet
 * answered). Undefined for an adapter fault: it says nothing of the API.
 */
export function usableAnswer(outcome: ApiOutcome): boolean | undefined {
  if (outcome.kind === 'fault') return undefined;
  return outcome.kind !== 'transient' || outcome.answered === true;
}

/** One process's count of rows whose calls in a row got no usable answer. Pure but for the clock passed in. */
export class FailureStreak {
  private readonly rows = new Set<string>();
  private firstAt = 0;

  /** Notes a call's result (`row`: which row it was for); true when this one makes the streak trip the breaker. */
  note(usable: boolean, now: number, row: string): boolean {
    if (usable) {
      this.rows.clear();
      return false;
    }
    if (this.rows.size === 0 || now - this.firstAt > TRIP_WINDOW_MS) {
      this.rows.clear();
      this.firstAt = now;
    }
    this.rows.add(row);
    return this.rows.size >= TRIP_AFTER;
  }

  reset(): void {
    this.rows.clear();
  }
}

/** Notes that the API answered rows: the latest permit time and the latest answer time among them (Redis ms); the marks only move on. */
export async function markApiAnswered(redis: RedisClient, ns: string, grantedAt: number, answeredAt: number): Promise<void> {
  await redis.zadd(apiAnsweredKey(ns), 'GT', grantedAt, 'last', answeredAt, 'answer');
}

/** Notes that a call of `row` granted at `grantedAt` (Redis ms) got no usable answer. */
export async function markApiFailing(redis: RedisClient, ns: string, row: string, grantedAt: number): Promise<void> {
  const key = apiFailingKey(ns);
  await redis.pipeline().zadd(key, 'GT', grantedAt, row).zremrangebyrank(key, 0, -FAILING_KEPT - 1).pexpire(key, FAILING_TTL_MS).exec();
}

/** `row`, which failed before, is failing no more: answered, or ended. */
export async function clearApiFailing(redis: RedisClient, ns: string, row: string): Promise<void> {
  await redis.zrem(apiFailingKey(ns), row);
}

/**
 * What the API's answers to other rows say of `row`'s calls without a usable answer, since
 * `since` (the permit time of its first such call); `again`: this is not that call.
 * - `answered`: the API answered other rows while it was failing: it refuses this row, and
 *   the row's last attempt fails. A row granted after its first failing call was answered (the
 *   API took a request that reached it later); or, from its second failing call on, a row was
 *   answered after that call left and no other row has failed since (the rows sent beside it,
 *   before it, answered while it was out, as around a sheet's last row).
 * - `alone`: no row was answered after it left: it cannot be told from an outage. Held; it
 *   counts toward the breaker.
 * - `unclear`: rows were answered after it left, but on its first failing call (at an outage's
 *   first moment the rows sent behind it have not failed yet), or other rows have failed since
 *   (the outage that began as it left, or rows the API fails too). Held, and left out of the
 *   breaker's count: the rows behind it that meet the outage count, and rows the API
 *   refuses while it answers others must not stop the pool.
 */
export type FailingVerdict = 'answered' | 'alone' | 'unclear';
export async function failingVerdict(redis: RedisClient, ns: string, row: string, since: number, again: boolean): Promise<FailingVerdict> {
  const [last, answer] = (await redis.zmscore(apiAnsweredKey(ns), 'last', 'answer')).map((v) => Number(v ?? 0)) as [number, number];
  if (last > since) return 'answered';
  if (answer <= since) return 'alone';
  if (!again) return 'unclear';
  const failing = await redis.zrevrangebyscore(apiFailingKey(ns), '+inf', `(${since}`, 'LIMIT', 0, 2);
  return failing.every((other) => other === row) ? 'answered' : 'unclear';
}

/** A row whose calls get no usable answer now (`{ns}:api-failing`). */
export interface FailingRow {
  uploadId: string;
  row: number;
}

/** Failing rows grouped by upload: each upload's rows, in the order given (the latest first). */
export function failingByUpload(rows: readonly FailingRow[]): Map<string, number[]> {
  const by = new Map<string, number[]>();
  for (const { uploadId, row } of rows) by.set(uploadId, [...(by.get(uploadId) ?? []), row]);
  return by;
}

/** The rows failing now, the latest first (at most `count`), of the uploads `among` only. */
export async function readFailingRows(redis: RedisClient, ns: string, among: Set<string>, count: number): Promise<FailingRow[]> {
  const rows: FailingRow[] = [];
  for (const member of await redis.zrevrange(apiFailingKey(ns), 0, FAILING_KEPT - 1)) {
    const failing = parseRowMember(member);
    if (!failing || !among.has(failing.uploadId)) continue;
    rows.push(failing);
    if (rows.length === count) break;
  }
  return rows;
}

/** Opens the breaker for the pool; true when this call opened it (the others found it open). */
export async function markApiDown(redis: RedisClient, ns: string, now: number): Promise<boolean> {
  return (await redis.hsetnx(steerKey(ns), API_DOWN, JSON.stringify({ since: now }))) === 1;
}

/** Closes it, noting when (`now`, ms since the epoch); true when this call closed it. */
export async function markApiUp(redis: RedisClient, ns: string, now: number): Promise<boolean> {
  if ((await redis.hdel(steerKey(ns), API_DOWN)) !== 1) return false;
  await redis.hset(steerKey(ns), API_UP, JSON.stringify({ since: now }));
  return true;
}

/** While open: whether this row may go as the pool's probe now (one per PROBE_EVERY_MS). */
export async function takeProbe(redis: RedisClient, ns: string): Promise<boolean> {
  return (await redis.set(apiProbeKey(ns), '1', 'PX', PROBE_EVERY_MS, 'NX')) === 'OK';
}

/**
 * Whether the API counts as available, and since when (ms since the epoch): when the
 * outage began, or when the last one ended; 0 when it has never counted as down.
 */
export async function readApiState(redis: RedisClient, ns: string): Promise<{ available: boolean; since: number }> {
  const [down, up] = await redis.hmget(steerKey(ns), API_DOWN, API_UP);
  const outage = parseApiDown(down);
  return outage ? { available: false, since: outage.since } : { available: true, since: parseApiDown(up)?.since ?? 0 };
}
