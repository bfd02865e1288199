/**
 * The adapter interface of marketplace.md: a module that translates one row into
 * the marketplace's request and its answer into an outcome. The pool keeps the
 * rest (permit, HTTP, timeouts, retries, idempotency, tokens, pausing, counting).
 *
 * This file holds the types an adapter is written against and the checks the
 * pool runs on whatever an adapter returns: an adapter is code the operator
 * wrote, so nothing it returns is trusted.
 */
import type { Product } from '../excel/fields.js';

/** The seller's entry of SELLER_CREDENTIALS_FILE: whatever fields the marketplace needs. */
export type Credentials = Readonly<Record<string, unknown>>;

export interface AdapterCall {
  sellerId: string;
  uploadId: string;
  /** The sheet's row number. */
  row: number;
  /** `{uploadId}:{row}`, the same on every attempt. */
  idempotencyKey: string;
  product: Product;
  /** The sheet's other columns, by header as written; empty cells left out. */
  attributes: Readonly<Record<string, string>>;
  credentials: Credentials | undefined;
  /** The seller's current access token, when the adapter has tokenRequest. */
  token?: string;
  /** ms since the epoch (host clock), for signatures. */
  now: number;
}

export interface AdapterRequest {
  method: string;
  /** Appended to REGISTRATION_API_URL. */
  path?: string;
  /** Absolute; wins over path. */
  url?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
}

export interface AdapterAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** Parsed as JSON when it is JSON, else the text. */
  body: unknown;
  /** True when the body was longer than 1 MiB: `body` is then its first MiB, as text (the rest was not read). */
  bodyTruncated?: boolean;
}

/** A rate rule the marketplace announced for the seller. */
export interface AnnouncedRule {
  max: number;
  windowMs: number;
}

export type AdapterOutcome = (
  | { kind: 'registered'; productId: string }
  | { kind: 'duplicate'; productId?: string; reason: string }
  | { kind: 'invalid'; reason: string; field?: string }
  | { kind: 'throttled'; retryAfterMs?: number }
  | { kind: 'unauthorized'; reason: string }
  | { kind: 'transient'; reason: string }
) & { rule?: AnnouncedRule };

export interface TokenContext {
  sellerId: string;
  credentials: Credentials | undefined;
  now: number;
}

export type TokenOutcome =
  | { token: string; expiresInMs: number }
  | Extract<AdapterOutcome, { kind: 'unauthorized' | 'throttled' | 'transient' }>;

type MaybePromise<T> = T | Promise<T>;

/** What an adapter module exports by default (marketplace.md, "The module"). */
export interface Adapter {
  request(call: AdapterCall): MaybePromise<AdapterRequest>;
  outcome(answer: AdapterAnswer): MaybePromise<AdapterOutcome>;
  tokenRequest?(ctx: TokenContext): MaybePromise<AdapterRequest>;
  tokenOutcome?(answer: AdapterAnswer): MaybePromise<TokenOutcome>;
  /**
   * True when the marketplace announces every seller's rule in its answers
   * (docs/adapters.md): from the pool's first moment, a seller with no answered
   * send in the last window sends one row and the rest under the rule its
   * answer brings. Without it the pool waits so only once an answer has carried
   * a rule, so a fresh pool's first window leaves under the configured rule.
   */
  announcesRules?: boolean;
}

/** An adapter that threw or returned something that is not what marketplace.md asks for. */
export class AdapterFault extends Error {
  override readonly name = 'AdapterFault';
  readonly retryable = false;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** A reason or an id as text a seller can be shown: no control characters, no bidirectional overrides (which reorder what follows). */
const nonEmpty = (v: unknown, max = 500): string | undefined =>
  // eslint-disable-next-line no-control-regex
  typeof v === 'string' && v.trim() !== '' ? v.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, ' ').trim().slice(0, max) : undefined;
/** A header name HTTP allows (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value HTTP allows, as Node sends it: tab, visible ASCII, space and Latin-1; no CR or LF. */
// eslint-disable-next-line no-control-regex
const HEADER_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;
const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a');

/** What a value looks like, for a message (never the value itself: it may hold a secret). */
export function shapeOf(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (isObject(v)) return `an object with ${Object.keys(v).slice(0, 6).join(', ') || 'no keys'}`;
  return `a ${typeof v}`;
}

/** @throws AdapterFault when `value` is not a request. `what`: "request()" or "tokenRequest()". */
export function checkRequest(value: unknown, what: string): AdapterRequest {
  if (!isObject(value)) throw new AdapterFault(`${what} returned ${shapeOf(value)}, not a request object`);
  const method = typeof value.method === 'string' ? value.method.toUpperCase() : '';
  if (!METHODS.has(method)) throw new AdapterFault(`${what} returned a request whose method is not one of ${[...METHODS].join(', ')}`);
  const url = typeof value.url === 'string' ? value.url : undefined;
  const path = typeof value.path === 'string' ? value.path : undefined;
  if (url === undefined && path === undefined) throw new AdapterFault(`${what} returned a request with neither path nor url`);
  if (url !== undefined && !/^https?:\/\//i.test(url)) throw new AdapterFault(`${what} returned a url that is not http:// or https://`);
  const headers: Record<string, string> = {};
  if (value.headers !== undefined) {
    if (!isObject(value.headers)) throw new AdapterFault(`${what} returned headers that are not an object`);
    for (const [k, v] of Object.entries(value.headers)) {
      if (v === undefined) continue;
      if (typeof v !== 'string' && typeof v !== 'number') throw new AdapterFault(`${what} returned header ${JSON.stringify(k)} that is not a string`);
      // such a header cannot be sent: the row fails naming the adapter (sent anyway, it would fail as if
      // the API were unreachable, or go altered: a CR or LF dropped)
      if (!HEADER_NAME.test(k)) throw new AdapterFault(`${what} returned a header name HTTP does not allow: ${JSON.stringify(k.slice(0, 40))}`);
      if (!HEADER_VALUE.test(String(v))) {
        throw new AdapterFault(`${what} returned header ${JSON.stringify(k)} whose value holds a character HTTP does not allow (a line break, a control character, or one beyond Latin-1: encode it)`);
      }
      headers[k] = String(v);
    }
  }
  return { method, ...(url !== undefined ? { url } : { path }), headers, ...(value.body !== undefined ? { body: value.body } : {}) };
}

function checkRule(value: unknown): AnnouncedRule | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new AdapterFault(`outcome() returned a rule that is not { max, windowMs }`);
  const { max, windowMs } = value;
  if (!Number.isInteger(max) || (max as number) < 1 || !Number.isInteger(windowMs) || (windowMs as number) < 1) {
    throw new AdapterFault('outcome() returned a rule whose max and windowMs are not whole numbers of at least 1');
  }
  return { max: max as number, windowMs: windowMs as number };
}

/** @throws AdapterFault when `value` is not an outcome of marketplace.md. */
export function checkOutcome(value: unknown, what = 'outcome()'): AdapterOutcome {
  if (!isObject(value)) throw new AdapterFault(`${what} returned ${shapeOf(value)}, not an outcome object`);
  const rule = checkRule(value.rule);
  const withRule = <T extends object>(o: T) => (rule ? { ...o, rule } : o);
  const reasonOf = (fallback?: string) => {
    const r = nonEmpty(value.reason) ?? fallback;
    if (r === undefined) throw new AdapterFault(`${what} returned ${article(String(value.kind))} ${String(value.kind)} outcome without a reason`);
    return r;
  };
  switch (value.kind) {
    case 'registered': {
      const productId = nonEmpty(typeof value.productId === 'number' ? String(value.productId) : value.productId, 255);
      if (!productId) throw new AdapterFault(`${what} returned a registered outcome without a productId`);
      return withRule({ kind: 'registered', productId });
    }
    case 'duplicate': {
      const productId = nonEmpty(typeof value.productId === 'number' ? String(value.productId) : value.productId, 255);
      return withRule({ kind: 'duplicate', reason: reasonOf('the marketplace already has this product'), ...(productId ? { productId } : {}) });
    }
    case 'invalid': {
      const field = nonEmpty(value.field, 100);
      return withRule({ kind: 'invalid', reason: reasonOf(), ...(field ? { field } : {}) });
    }
    case 'throttled': {
      const ms = value.retryAfterMs;
      if (ms !== undefined && (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)) {
        throw new AdapterFault(`${what} returned a throttled outcome whose retryAfterMs is not a number of ms`);
      }
      return withRule({ kind: 'throttled', ...(ms !== undefined ? { retryAfterMs: Math.ceil(ms) } : {}) });
    }
    case 'unauthorized':
      return withRule({ kind: 'unauthorized', reason: reasonOf('the marketplace refused the credentials') });
    case 'transient':
      return withRule({ kind: 'transient', reason: reasonOf('the marketplace gave no usable answer') });
    default:
      throw new AdapterFault(`${what} returned an outcome of kind ${JSON.stringify(String(value.kind)).slice(0, 40)}, not one of registered, duplicate, invalid, throttled, unauthorized, transient`);
  }
}

/** @throws AdapterFault when `value` is neither a token nor an unauthorized/throttled/transient outcome. */
export function checkTokenOutcome(value: unknown): TokenOutcome {
  if (isObject(value) && value.kind === undefined) {
    const token = value.token;
    const expiresInMs = value.expiresInMs;
    if (typeof token !== 'string' || token === '') throw new AdapterFault('tokenOutcome() returned no token');
    if (typeof expiresInMs !== 'number' || !Number.isFinite(expiresInMs) || expiresInMs < 1000) {
      throw new AdapterFault('tokenOutcome() returned an expiresInMs that is not a number of ms of at least 1000');
    }
    return { token, expiresInMs: Math.floor(expiresInMs) };
  }
  const outcome = checkOutcome(value, 'tokenOutcome()');
  if (outcome.kind === 'unauthorized' || outcome.kind === 'throttled' || outcome.kind === 'transient') return outcome;
  throw new AdapterFault(`tokenOutcome() returned ${article(outcome.kind)} ${outcome.kind} outcome; expected a token, or unauthorized, throttled or transient`);
}
