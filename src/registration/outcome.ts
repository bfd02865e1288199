/** An API response (or its absence) -> what the worker does, per registration-api.md. Pure. */

export type ApiOutcome =
  | { kind: 'registered'; productId: string; replay: boolean }
  | { kind: 'invalid'; reason: string; field?: string }
  | { kind: 'duplicate'; productId: string; reason: string }
  | { kind: 'throttled'; retryAfterMs: number }
  | { kind: 'transient'; reason: string };

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

function text(value: unknown, max = 500): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim().slice(0, max);
}

export function outcomeOf(status: number, body: unknown, headers: Record<string, unknown>, nowMs: number): ApiOutcome {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const productId = text(b.productId, 255);
  if (status === 201 || status === 200) {
    if (productId) return { kind: 'registered', productId, replay: status === 200 };
    return { kind: 'transient', reason: `the API answered ${status} without a productId` };
  }
  if (status === 400 || status === 422) {
    const field = text(b.field, 100);
    return { kind: 'invalid', reason: text(b.error) ?? `the API rejected the product (${status})`, ...(field ? { field } : {}) };
  }
  if (status === 409) {
    if (productId) return { kind: 'duplicate', productId, reason: text(b.error) ?? 'the seller already has this SKU' };
    return { kind: 'invalid', reason: text(b.error) ?? 'the API reported a conflict (409) without the existing productId' };
  }
  if (status === 429) return { kind: 'throttled', retryAfterMs: parseRetryAfter(headers['retry-after'], nowMs) };
  const detail = text(b.error, 200);
  return { kind: 'transient', reason: `the API answered ${status}${detail ? `: ${detail}` : ''}` };
}

/** A request that got no answer -> transient, with a reason a seller can read. */
export function outcomeOfError(err: unknown, timeoutMs: number): ApiOutcome {
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
      return { kind: 'transient', reason: `the request to the API failed (${e?.code ?? text(e?.message, 100) ?? 'unknown error'})` };
  }
}
