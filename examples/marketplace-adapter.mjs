// @ts-check
/**
 * An adapter (docs/adapters.md) for the marketplace stand-in that
 * `bulk-register mock-api --marketplace` serves. Copy it and change the
 * names, paths and codes to your marketplace's.
 *
 *   REGISTRATION_ADAPTER=examples/marketplace-adapter.mjs
 *   SELLER_CREDENTIALS_FILE=examples/credentials.example.json   { "<sellerId>": { "clientId", "clientSecret" } }
 *
 * It only translates; the pool sends, times out, retries, keeps the token
 * and the seller's rule. request, outcome and tokenOutcome do no I/O.
 */
import { createHmac } from 'node:crypto';

/**
 * @typedef {{ method: string, path?: string, url?: string, headers?: Record<string, string>, body?: unknown }} Request
 * @typedef {{ status: number, headers: Record<string, string>, body: any }} Answer
 * @typedef {{ kind: string, [key: string]: unknown }} Outcome
 * @typedef {{ clientId?: string, clientSecret?: string } | undefined} Credentials
 */

/** Our field (excel-format.md) -> the marketplace's. @type {Record<string, string>} */
const FIELDS = {
  sku: 'sellerProductCode',
  name: 'productName',
  price: 'salePrice',
  stock: 'stockQuantity',
  category: 'categoryId',
  brand: 'brandName',
  description: 'detailHtml',
  imageUrl: 'mainImageUrl',
};
/** The marketplace's field -> ours, to name the cell a refusal is about. */
const OUR_FIELD = Object.fromEntries(Object.entries(FIELDS).map(([ours, theirs]) => [theirs, ours]));

/** What the marketplace said, for a reason: "CODE: message". */
const said = (/** @type {Answer} */ { status, body }) =>
  [body?.code, body?.message].filter(Boolean).join(': ') || `the marketplace answered ${status}`;

/** Retry-After in seconds -> ms; undefined when absent (the pool then waits one window). */
function retryAfterMs(/** @type {Record<string, string>} */ headers) {
  const seconds = Number(headers['retry-after']);
  return headers['retry-after'] && seconds >= 0 ? seconds * 1000 : undefined;
}

/** The seller's rule as announced in X-Mkt-RateLimit-Limit / -Window (seconds); undefined when absent. */
function announcedRule(/** @type {Record<string, string>} */ headers) {
  const max = Number(headers['x-mkt-ratelimit-limit']);
  const seconds = Number(headers['x-mkt-ratelimit-window']);
  return Number.isInteger(max) && max > 0 && seconds > 0 ? { max, windowMs: Math.round(seconds * 1000) } : undefined;
}

export default {
  // The marketplace gives every seller's rule in X-Mkt-RateLimit-* on every answer: a seller's first
  // row goes alone and the rest follow under the rule it brings, even in a pool's first moments.
  // Leave it out (or false) for a marketplace that announces no rules, or only some sellers'.
  announcesRules: true,

  /** @param {{ credentials: Credentials, now: number }} ctx @returns {Request} */
  tokenRequest({ credentials, now }) {
    // Missing credentials are sent as they are: the marketplace refuses them, and
    // the pool pauses the seller until its entry in the credentials file changes.
    const clientId = String(credentials?.clientId ?? '');
    const signature = createHmac('sha256', String(credentials?.clientSecret ?? '')).update(`${clientId}.${now}`).digest('hex');
    return { method: 'POST', path: '/oauth/token', body: { clientId, timestamp: now, signature } };
  },

  /** @param {Answer} answer */
  tokenOutcome(answer) {
    const { status, headers, body } = answer;
    const expiresInMs = Number(body?.expires_in) * 1000;
    if (status === 200 && body?.access_token && expiresInMs > 0) return { token: body.access_token, expiresInMs };
    if (status === 401) return { kind: 'unauthorized', reason: said(answer) };
    if (status === 429) return { kind: 'throttled', retryAfterMs: retryAfterMs(headers) };
    return { kind: 'transient', reason: said(answer) };
  },

  /**
   * @param {{ product: Record<string, unknown>, attributes: Record<string, string>, idempotencyKey: string, token?: string }} call
   * @returns {Request}
   */
  request({ product, attributes, idempotencyKey, token }) {
    /** @type {Record<string, unknown>} */
    const body = {};
    for (const [ours, value] of Object.entries(product)) body[FIELDS[ours] ?? ours] = value;
    if (Object.keys(attributes).length > 0) body.extras = attributes; // the sheet's other columns
    return { method: 'POST', path: '/v2/products', headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': idempotencyKey }, body };
  },

  /** @param {Answer} answer @returns {Outcome} */
  outcome(answer) {
    const { status, headers, body } = answer;
    /** @type {Outcome} */
    let o;
    if (status === 200 && body?.productNo) o = { kind: 'registered', productId: String(body.productNo) };
    else if (status === 409) o = { kind: 'duplicate', productId: body?.existingProductNo, reason: said(answer) };
    else if (status === 400) o = { kind: 'invalid', reason: body?.message ?? said(answer), field: OUR_FIELD[body?.field] ?? body?.field };
    else if (status === 401) o = { kind: 'unauthorized', reason: said(answer) };
    else if (status === 429) o = { kind: 'throttled', retryAfterMs: retryAfterMs(headers) };
    else o = { kind: 'transient', reason: said(answer) }; // 5xx, or anything unexpected: retried with the same X-Request-Id
    const rule = announcedRule(headers);
    return rule ? { ...o, rule } : o;
  },
};
