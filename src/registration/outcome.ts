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

const DEFAULT_RETRY_AFTER_MS = 1000;

/** `Retry-After` as seconds or an HTTP date -> ms from `nowMs` (host clock); 1 s when absent or unreadable. */
export function parseRetryAfter(value: unknown, nowMs: number): number {
  if (typeof value !== 'string' || value.trim() === '') return DEFAULT_RETRY_AFTER_MS;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const date = Date.parse(v);
  if (Number.isFinite(date)) return Math.max(0, date - nowMs);
  return DEFAULT_RETRY_AFTER_MS;
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
