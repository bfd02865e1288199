/**
 * The built-in adapter: registration-api.md written as an adapter (marketplace.md),
 * so that the pool has one code path. POST /sellers/{id}/products with the
 * product as JSON; `Authorization: Bearer` from the seller's `token` credential,
 * else REGISTRATION_TOKEN; the rule announced in `RateLimit-Policy`.
 */
import type { Adapter, AdapterAnswer, AdapterOutcome, AnnouncedRule } from './adapter.js';
import { parseRetryAfter } from './outcome.js';

function text(value: unknown, max = 500): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim().slice(0, max);
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

/** registration-api.md's answers -> outcomes (the host clock reads Retry-After dates). */
export function builtinOutcome(answer: AdapterAnswer, nowMs = Date.now()): AdapterOutcome {
  const { status, headers } = answer;
  const b = (answer.body && typeof answer.body === 'object' ? answer.body : {}) as Record<string, unknown>;
  const rule = parseRateLimitPolicy(headers['ratelimit-policy']);
  const withRule = (o: AdapterOutcome): AdapterOutcome => (rule ? { ...o, rule } : o);
  const productId = text(b.productId, 255);
  if (status === 201 || status === 200) {
    if (productId) return withRule({ kind: 'registered', productId });
    return withRule({ kind: 'transient', reason: `the API answered ${status} without a productId` });
  }
  if (status === 400 || status === 422) {
    const field = text(b.field, 100);
    return withRule({ kind: 'invalid', reason: text(b.error) ?? `the API rejected the product (${status})`, ...(field ? { field } : {}) });
  }
  if (status === 409) {
    if (productId) return withRule({ kind: 'duplicate', productId, reason: text(b.error) ?? 'the seller already has this SKU' });
    return withRule({ kind: 'invalid', reason: text(b.error) ?? 'the API reported a conflict (409) without the existing productId' });
  }
  if (status === 401 || status === 403) {
    return withRule({ kind: 'unauthorized', reason: `the API answered ${status}${text(b.error, 200) ? `: ${text(b.error, 200)}` : ''}` });
  }
  if (status === 429) return withRule({ kind: 'throttled', retryAfterMs: parseRetryAfter(headers['retry-after'], nowMs) });
  const detail = text(b.error, 200);
  return withRule({ kind: 'transient', reason: `the API answered ${status}${detail ? `: ${detail}` : ''}` });
}

export function builtinAdapter(opts: { registrationToken?: string | undefined } = {}): Adapter {
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
    outcome: (answer) => builtinOutcome(answer),
  };
}
