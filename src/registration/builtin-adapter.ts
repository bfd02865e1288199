/**
 * The built-in adapter: registration-api.md written as an adapter (marketplace.md),
 * so that the pool has one code path. POST /sellers/{id}/products with the
 * product as JSON; `Authorization: Bearer` from the seller's `token` credential,
 * else REGISTRATION_TOKEN; the rule announced in `RateLimit-Policy`.
 */
import { STATUS_CODES } from 'node:http';
import { maskUrl } from '../mask-url.js';
import type { Adapter, AdapterAnswer, AdapterOutcome, AnnouncedRule } from './adapter.js';
import { parseRetryAfter } from './outcome.js';

function text(value: unknown, max = 500): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim().slice(0, max);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** A text answer as a seller reads it: an HTML page's text without its tags, scripts and styles, spaces collapsed, cut at `max`. */
export function plainText(body: string, max = 300): string | undefined {
  let t = body;
  if (/<[a-z!/][^>]*>/i.test(t)) {
    t = t
      .replace(/<(script|style|head)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&(#\d+|#x[\da-f]+|[a-z]+);/gi, (m, e: string) => {
        if (e[0] !== '#') return ENTITIES[e.toLowerCase()] ?? m;
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1));
        return code > 31 && code < 0x110000 ? String.fromCodePoint(code) : ' ';
      });
  }
  const flat = text(t.replace(/\s+/g, ' '), Infinity);
  if (flat === undefined) return undefined;
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/**
 * The API's message in an answer's body: `error` as text or `error.message`, else `message`,
 * `detail` (RFC 9457) or `errors[0].message`; a body of text or HTML as plain text.
 */
export function messageOf(body: unknown, max = 500): string | undefined {
  if (typeof body === 'string') return plainText(body, Math.min(max, 300));
  if (!isObject(body)) return undefined;
  const first = Array.isArray(body.errors) ? body.errors[0] : undefined;
  for (const v of [body.error, body.message, body.detail, first]) {
    const m = typeof v === 'string' ? text(v, max) : isObject(v) ? text(v.message, max) ?? text(v.detail, max) : undefined;
    if (m) return m;
  }
  return undefined;
}

/** A productId as text: a string, or a number the API sent as one (`{"productId": 12345}`). */
function idOf(value: unknown): string | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : text(value, 255);
}

/**
 * `RateLimit-Policy` (IETF RateLimit header fields draft): `<max>;w=<seconds>`,
 * or the later drafts' `"<name>";q=<max>;w=<seconds>`. With several policies,
 * the first. Undefined when absent or unreadable.
 */
export function parseRateLimitPolicy(value: string | undefined): AnnouncedRule | undefined {
  if (!value) return undefined;
  const first = value.split(',')[0]!.trim();
  const parts = first.split(';').map((p) => p.trim());
  let max = /^\d+$/.test(parts[0] ?? '') ? Number(parts[0]) : undefined;
  let seconds: number | undefined;
  for (const p of parts.slice(1)) {
    const m = /^([a-z]+)\s*=\s*"?(\d+(?:\.\d+)?)"?$/i.exec(p);
    if (!m) continue;
    if (m[1]!.toLowerCase() === 'w') seconds = Number(m[2]);
    if (m[1]!.toLowerCase() === 'q' && max === undefined) max = Number(m[2]);
  }
  if (max === undefined || seconds === undefined || !Number.isInteger(max) || max < 1 || seconds <= 0) return undefined;
  return { max, windowMs: Math.round(seconds * 1000) };
}

/** `404 Not Found`: the status with its standard name, when it has one. */
const named = (status: number) => (STATUS_CODES[status] ? `${status} ${STATUS_CODES[status]}` : String(status));

/**
 * registration-api.md's answers -> outcomes (the host clock reads Retry-After dates).
 * `apiUrl`: REGISTRATION_API_URL, named (masked) in the reason of an answer that says the address is wrong.
 *
 * Beyond the table of registration-api.md: another 2xx, or a 200/201 without a productId, is an
 * answer that does not say whether the product was created (transient: retried with the same key,
 * the replay's 200 gives the productId); a 3xx (never followed) and another 4xx say that none was:
 * the row fails, naming the status. Only a 5xx is "no usable answer" (cli.md, API outages).
 */
export function builtinOutcome(answer: AdapterAnswer, nowMs = Date.now(), apiUrl?: string): AdapterOutcome {
  const { status, headers } = answer;
  const b = (answer.body && typeof answer.body === 'object' ? answer.body : {}) as Record<string, unknown>;
  const rule = parseRateLimitPolicy(headers['ratelimit-policy']);
  const withRule = (o: AdapterOutcome): AdapterOutcome => (rule ? { ...o, rule } : o);
  const productId = idOf(b.productId);
  const message = messageOf(answer.body);
  const detail = messageOf(answer.body, 200);
  const saying = detail ? `: ${detail}` : '';
  if ((status === 201 || status === 200) && productId) return withRule({ kind: 'registered', productId });
  if (status >= 200 && status < 300) {
    if (answer.bodyTruncated) return withRule({ kind: 'transient', reason: `the API answered ${named(status)} with a body over 1 MiB, not read: the productId is unknown` });
    const what = status === 201 || status === 200 ? 'without a productId' : 'instead of 201 with a productId';
    return withRule({ kind: 'transient', reason: `the API answered ${named(status)} ${what}: whether the product was created is unknown` });
  }
  if (status >= 300 && status < 400) {
    const location = text(headers.location, 300);
    return withRule({
      kind: 'invalid',
      reason: `the API redirected (${named(status)})${location ? ` to ${maskUrl(location)}` : ''}: redirects are not followed, no product was created; check REGISTRATION_API_URL`,
    });
  }
  if (status === 400 || status === 422) {
    const field = text(b.field, 100) ?? (isObject(b.error) ? text(b.error.field, 100) : undefined);
    return withRule({ kind: 'invalid', reason: message ?? `the API rejected the product (${named(status)}) without saying why`, ...(field ? { field } : {}) });
  }
  if (status === 409) {
    if (productId) return withRule({ kind: 'duplicate', productId, reason: message ?? 'the seller already has this SKU' });
    return withRule({ kind: 'invalid', reason: message ?? 'the API reported a conflict (409) without the existing productId' });
  }
  if (status === 401 || status === 403) {
    return withRule({ kind: 'unauthorized', reason: `the API answered ${status}${saying}` });
  }
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headers['retry-after'], nowMs);
    return withRule({ kind: 'throttled', ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }
  // the request was not handled (408 Request Timeout, 425 Too Early): sent again, as a 5xx is,
  // but the API answered (it counts toward no outage: registration/client.ts)
  if (status === 408 || status === 425) return withRule({ kind: 'transient', reason: `the API answered ${named(status)}${saying}: not handled, sent again` });
  if (status >= 400 && status < 500) {
    const where = status === 404 ? `; the address may be wrong: check REGISTRATION_API_URL${apiUrl ? ` (${maskUrl(apiUrl)})` : ''}` : '';
    return withRule({ kind: 'invalid', reason: `the API answered ${named(status)}${saying}: no product was created${where}` });
  }
  return withRule({ kind: 'transient', reason: `the API answered ${status}${saying}` });
}

export function builtinAdapter(opts: { registrationToken?: string | undefined; apiUrl?: string | undefined } = {}): Adapter {
  return {
    request(call) {
      const credentialToken = typeof call.credentials?.token === 'string' && call.credentials.token !== '' ? call.credentials.token : undefined;
      const bearer = credentialToken ?? opts.registrationToken;
      return {
        method: 'POST',
        path: `/sellers/${encodeURIComponent(call.sellerId)}/products`,
        headers: { 'Idempotency-Key': call.idempotencyKey, ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}) },
        body: call.product,
      };
    },
    outcome: (answer) => builtinOutcome(answer, Date.now(), opts.apiUrl),
  };
}
