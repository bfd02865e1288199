/** What the pool does with a row's call: the adapter's outcome, or why there is none. Pure. */
import type { AdapterOutcome } from './adapter.js';

/**
 * An adapter's outcome (marketplace.md), or `fault`: the adapter threw or returned
 * something that is not an outcome, and the row fails with that reason. A transient
 * outcome `answered`: the API gave an HTTP answer that is not a 5xx (a 202, a 201
 * without a productId): the row is retried, but the API is there (steering/outage.ts).
 */
export type ApiOutcome =
  | Exclude<AdapterOutcome, { kind: 'transient' }>
  | (Extract<AdapterOutcome, { kind: 'transient' }> & { answered?: true })
  | { kind: 'fault'; reason: string; rule?: undefined };

/**
 * The longest a 429 makes a seller wait (ms), whatever it asked: 1 hour. A marketplace's
 * own windows are seconds to minutes; a longer Retry-After is most likely a mistake (a
 * value in ms, a timestamp), and one near 2^53 cannot even be written as Redis's expiry
 * (it failed the row with "ERR value is not an integer"). When the marketplace meant it
 * (a daily quota), the seller's next row asks again in an hour and gets a new Retry-After:
 * one call an hour, no attempt used, rows pending.
 */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * `Retry-After` as seconds or an HTTP date -> ms from `nowMs` (host clock); undefined when
 * absent or unreadable (a negative number, a date in some other form): the pool then waits
 * one window of the seller's rule (marketplace.md, throttled).
 */
export function parseRetryAfter(value: unknown, nowMs: number): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  // an HTTP date names its day or month ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse takes "-5" for a year
  const date = /[a-z]{3}/i.test(v) ? Date.parse(v) : NaN;
  if (Number.isFinite(date)) return Math.max(0, date - nowMs);
  return undefined;
}

/**
 * How long a throttled seller waits (ms): the marketplace's retryAfterMs, at most
 * MAX_RETRY_AFTER_MS (`clamped` then), else one window of the seller's rule, W + G.
 */
export function throttleWaitMs(retryAfterMs: number | undefined, windowMs: number, guardMs: number): { waitMs: number; clamped: boolean } {
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs < 0) return { waitMs: windowMs + guardMs, clamped: false };
  return retryAfterMs > MAX_RETRY_AFTER_MS ? { waitMs: MAX_RETRY_AFTER_MS, clamped: true } : { waitMs: Math.ceil(retryAfterMs), clamped: false };
}

/** A request that got no answer -> transient, with a reason a seller can read. */
export function outcomeOfError(err: unknown, timeoutMs: number): { kind: 'transient'; reason: string } {
  const e = err as { code?: string; message?: string };
  switch (e?.code) {
    case 'ECONNABORTED':
    case 'ETIMEDOUT':
      return { kind: 'transient', reason: `the API did not answer within ${timeoutMs} ms` };
    case 'ECONNREFUSED':
      return { kind: 'transient', reason: 'the API refused the connection (is it running?)' };
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ERR_SOCKET_CONNECTION_TIMEOUT':
      return { kind: 'transient', reason: 'the connection to the API was dropped before it answered' };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { kind: 'transient', reason: 'the API host name could not be resolved' };
    default:
      return { kind: 'transient', reason: `the request to the API failed (${e?.code ?? 'unknown error'})` };
  }
}
