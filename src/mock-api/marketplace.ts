/**
 * A marketplace-shaped API for demos and tests. It is NOT registration-api.md:
 * it has its own sign-in, paths, field names and error codes, so that an
 * adapter (marketplace.md) has real translating to do.
 *
 *   POST /oauth/token   { clientId, timestamp (ms), signature }
 *        signature = hex HMAC-SHA256(clientSecret, `${clientId}.${timestamp}`)
 *        200 { access_token, token_type: "Bearer", expires_in (s, may be fractional) }
 *        401 { code: "INVALID_CLIENT", message }  unknown client, bad signature,
 *            revoked secret, timestamp more than 5 min off
 *        429 { code: "TOO_MANY_TOKEN_REQUESTS" } + Retry-After (s): over `tokenRule` per client
 *   POST /v2/products   Authorization: Bearer <token>, X-Request-Id: <idempotency key>
 *        body { sellerProductCode, productName, salePrice, stockQuantity, categoryId,
 *               brandName?, detailHtml?, mainImageUrl?, extras?: { <key>: text } }
 *        200 { productNo }  (a replay of the same X-Request-Id: the same productNo, not counted)
 *        400 { code: "VALIDATION_ERROR", message, field }
 *        409 { code: "DUPLICATE_PRODUCT", message, existingProductNo }
 *        401 { code: "TOKEN_EXPIRED" | "INVALID_TOKEN", message }
 *        429 { code: "RATE_LIMITED", message } + Retry-After (s): over the seller's enforced
 *            rule, a sliding window over arrival times
 *        Every answer for a known seller carries the seller's ANNOUNCED rule:
 *        X-Mkt-RateLimit-Limit: <max>, X-Mkt-RateLimit-Window: <seconds>.
 *
 * Test endpoints: GET /_stats (stats()), POST /_sellers/{id}/rule
 * { max, windowMs, enforceAfterMs? } (setRule), POST /_sellers/{id}/rotate
 * { clientSecret } (rotateSecret), POST /_sellers/{id}/tokens { expire?: true }
 * (revokeTokens / expireTokens). All times are ms on the `now` clock.
 */
import http from 'node:http';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LocalServer, onBody } from './local-server.js';
import type { Logger } from '../logger.js';
import { SELLER_ID } from '../keys.js';
import { checkRule, MarketplaceSeller, type MarketplaceClient, type MarketplaceRule, type MarketplaceSellerStats } from './marketplace-seller.js';
import { marketplaceProductProblem } from './marketplace-product.js';

export type { MarketplaceClient, MarketplaceRule, MarketplaceSellerStats } from './marketplace-seller.js';

export interface MockMarketplaceOptions {
  /** One client per seller: sellerId -> its client id and secret. */
  clients: Record<string, MarketplaceClient>;
  /** The registration rule of every seller without an override. Default 100 per 60 000 ms. */
  rule?: MarketplaceRule;
  /** Per-seller overrides of `rule`. */
  sellerRules?: Record<string, MarketplaceRule>;
  /** Token requests per client. Default 10 per 60 000 ms. */
  tokenRule?: MarketplaceRule;
  /** Default 3 600 000. */
  tokenLifetimeMs?: number;
  /** Added before each /v2/products answer, uniformly in [min, max] ms. */
  latencyMs?: { min: number; max: number };
  /** Added before each /oauth/token answer, so that overlapping token requests are observable. */
  tokenLatencyMs?: { min: number; max: number };
  /** Category ids the marketplace does not have: 400 on categoryId. */
  invalidCategories?: string[];
  /** How many of each seller's last request bodies stats() keeps. Default 20. */
  keepBodies?: number;
  log?: Logger;
  random?: () => number;
  now?: () => number;
}

export interface MarketplaceStats {
  sellers: Record<string, MarketplaceSellerStats>;
  /** Token requests naming no known clientId (401 INVALID_CLIENT). */
  unknownClientTokenRequests: number;
  /** /v2/products calls with no token or one never issued (401 INVALID_TOKEN). */
  unknownTokenCalls: number;
}

interface IssuedToken {
  sellerId: string;
  generation: number;
  expiresAt: number;
}

const FIVE_MINUTES_MS = 5 * 60_000;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class MockMarketplace {
  private readonly listener = new LocalServer();
  private readonly sellers = new Map<string, MarketplaceSeller>();
  private readonly byClientId = new Map<string, MarketplaceSeller>();
  private readonly tokens = new Map<string, IssuedToken>();
  private readonly invalidCategories: Set<string>;
  private readonly tokenRule: MarketplaceRule;
  private readonly tokenLifetimeMs: number;
  private readonly keepBodies: number;
  private readonly random: () => number;
  private readonly now: () => number;
  private nextProductNo = 1_000_000_001;
  private unknownClientTokenRequests = 0;
  private unknownTokenCalls = 0;

  constructor(private readonly opts: MockMarketplaceOptions) {
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    this.invalidCategories = new Set(opts.invalidCategories ?? []);
    this.tokenRule = checkRule(opts.tokenRule ?? { max: 10, windowMs: 60_000 }, 'tokenRule');
    this.tokenLifetimeMs = opts.tokenLifetimeMs ?? 3_600_000;
    this.keepBodies = opts.keepBodies ?? 20;
    const rule = checkRule(opts.rule ?? { max: 100, windowMs: 60_000 }, 'rule');
    for (const [id, client] of Object.entries(opts.clients)) {
      if (!SELLER_ID.test(id)) throw new RangeError(`clients: ${JSON.stringify(id)} is not a seller id (1-64 characters of A-Z a-z 0-9 _ -)`);
      if (typeof client?.clientId !== 'string' || client.clientId === '' || typeof client.clientSecret !== 'string' || client.clientSecret === '') {
        throw new RangeError(`clients.${id} must be { clientId, clientSecret } with non-empty strings`);
      }
      if (this.byClientId.has(client.clientId)) throw new RangeError(`clients.${id}: clientId ${JSON.stringify(client.clientId)} belongs to two sellers`);
      const own = opts.sellerRules?.[id] ? checkRule(opts.sellerRules[id], `sellerRules.${id}`) : rule;
      const seller = new MarketplaceSeller(id, client, own, this.keepBodies);
      this.sellers.set(id, seller);
      this.byClientId.set(client.clientId, seller);
    }
  }

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return this.listener.listen((req, res) => this.handle(req, res), port, host);
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  /**
   * Announces `rule` for the seller at once (headers of every later answer) and
   * enforces it `enforceAfterMs` from now; until then the rule enforced so far
   * stays. A client that obeys announcements therefore never meets a lowered
   * rule's 429, provided enforceAfterMs covers its calls already in flight.
   * (A raise announced with a delay would make an obeying client meet the old
   * rule's 429: announce raises with enforceAfterMs 0, the default.)
   * @throws RangeError for an unknown seller or a rule that is not whole numbers of at least 1.
   */
  setRule(sellerId: string, rule: MarketplaceRule, opts: { enforceAfterMs?: number } = {}): void {
    const s = this.seller(sellerId);
    const checked = checkRule(rule, 'rule');
    s.rule.announce(checked, this.now(), opts.enforceAfterMs ?? 0);
  }

  /** From now on the old secret, and every token issued under it, is refused. */
  rotateSecret(sellerId: string, newSecret: string): void {
    const s = this.seller(sellerId);
    if (typeof newSecret !== 'string' || newSecret === '') throw new RangeError('the new secret must be a non-empty string');
    s.rotate(newSecret);
  }

  /** Every token issued so far to the seller answers 401 INVALID_TOKEN; the secret still works. */
  revokeTokens(sellerId: string): void {
    this.seller(sellerId).generation++;
  }

  /** Every token issued so far to the seller answers 401 TOKEN_EXPIRED from now on. */
  expireTokens(sellerId: string): void {
    const at = this.now();
    for (const t of this.tokens.values()) if (t.sellerId === sellerId) t.expiresAt = Math.min(t.expiresAt, at);
  }

  /** The X-Request-Ids (the pool's idempotency keys) of the products registered, for every seller. */
  registeredKeys(): Set<string> {
    const keys = new Set<string>();
    for (const s of this.sellers.values()) for (const [id, result] of s.byRequestId) if (result.status === 200) keys.add(id);
    return keys;
  }

  /** Every access token issued so far (for checks that none appears in any output). */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  stats(): MarketplaceStats {
    const sellers: Record<string, MarketplaceSellerStats> = {};
    const now = this.now();
    for (const s of this.sellers.values()) sellers[s.id] = s.stats(now);
    return { sellers, unknownClientTokenRequests: this.unknownClientTokenRequests, unknownTokenCalls: this.unknownTokenCalls };
  }

  private seller(sellerId: string): MarketplaceSeller {
    const s = this.sellers.get(sellerId);
    if (!s) throw new RangeError(`no client for seller ${JSON.stringify(sellerId)}`);
    return s;
  }

  private send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string>, latency: { min: number; max: number } | undefined): void {
    const delay = latency ? latency.min + Math.floor(this.random() * (latency.max - latency.min + 1)) : 0;
    const write = () => {
      if (res.destroyed) return;
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (delay > 0) setTimeout(write, delay);
    else write();
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    onBody(req, (raw) => {
      // Timed at arrival: the moment the whole request is in.
      const arrivedAt = this.now();
      const path = new URL(req.url ?? '/', 'http://mock').pathname;
      const reply = (status: number, body: unknown) => this.send(res, status, body, {}, undefined);
      if (req.method === 'POST' && path === '/oauth/token') return this.token(res, raw, arrivedAt);
      if (req.method === 'POST' && path === '/v2/products') return this.product(req, res, raw, arrivedAt);
      if (req.method === 'GET' && path === '/_stats') return reply(200, this.stats());
      if (req.method === 'GET' && path === '/healthz') return reply(200, { ok: true });
      const admin = /^\/_sellers\/([^/]+)\/(rule|rotate|tokens)$/.exec(path);
      if (req.method === 'POST' && admin) {
        try {
          const b = JSON.parse(raw || '{}') as Record<string, unknown>;
          const id = decodeURIComponent(admin[1]!);
          if (admin[2] === 'rule') this.setRule(id, { max: Number(b.max), windowMs: Number(b.windowMs) }, { enforceAfterMs: Number(b.enforceAfterMs ?? 0) });
          else if (admin[2] === 'rotate') this.rotateSecret(id, String(b.clientSecret ?? ''));
          else if (b.expire === true) this.expireTokens(id);
          else this.revokeTokens(id);
          return reply(200, { ok: true });
        } catch (err) {
          return reply(400, { code: 'VALIDATION_ERROR', message: (err as Error).message });
        }
      }
      return reply(404, { code: 'NOT_FOUND', message: `no ${req.method} ${path}` });
    });
  }

  private token(res: http.ServerResponse, raw: string, arrivedAt: number): void {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => this.send(res, status, body, headers, this.opts.tokenLatencyMs);
    let b: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(raw);
      if (isObject(parsed)) b = parsed;
    } catch {
      // an unreadable body names no client: answered below
    }
    const s = typeof b.clientId === 'string' ? this.byClientId.get(b.clientId) : undefined;
    if (!s) {
      this.unknownClientTokenRequests++;
      return answer(401, { code: 'INVALID_CLIENT', message: 'unknown client' });
    }
    const c = s.counters;
    c.tokenRequests++;
    c.tokenRequestTimes.push(arrivedAt);
    s.tokensInFlight++;
    c.concurrentTokenRequestsMax = Math.max(c.concurrentTokenRequestsMax, s.tokensInFlight);
    let done = false;
    const finished = () => {
      if (!done) s.tokensInFlight--;
      done = true;
    };
    res.once('finish', finished);
    res.once('close', finished);

    const admitted = s.tokenLog.tryAdmit(arrivedAt, this.tokenRule.max, this.tokenRule.windowMs);
    if (!admitted.admitted) {
      c.tokenThrottled++;
      return answer(429, { code: 'TOO_MANY_TOKEN_REQUESTS', message: `at most ${this.tokenRule.max} token requests per ${this.tokenRule.windowMs / 1000} s` }, { 'Retry-After': String(Math.ceil(admitted.retryAfterMs / 1000)) });
    }
    const refuse = (message: string) => {
      c.tokenRefused++;
      return answer(401, { code: 'INVALID_CLIENT', message });
    };
    const timestamp = b.timestamp;
    if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) return refuse('timestamp must be ms since the epoch');
    if (Math.abs(arrivedAt - timestamp) > FIVE_MINUTES_MS) return refuse("timestamp is more than 5 minutes from the marketplace's clock");
    const signed = (secret: string) => matches(b.signature, createHmac('sha256', secret).update(`${s.client.clientId}.${timestamp}`).digest('hex'));
    if (!signed(s.client.clientSecret)) return refuse(s.earlierSecrets.some(signed) ? 'the client secret was revoked' : 'bad signature');

    const token = `mkt_${randomBytes(24).toString('hex')}`;
    this.tokens.set(token, { sellerId: s.id, generation: s.generation, expiresAt: arrivedAt + this.tokenLifetimeMs });
    c.tokensIssued++;
    answer(200, { access_token: token, token_type: 'Bearer', expires_in: this.tokenLifetimeMs / 1000 });
  }

  private product(req: http.IncomingMessage, res: http.ServerResponse, raw: string, arrivedAt: number): void {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const issued = bearer ? this.tokens.get(bearer) : undefined;
    if (!issued) {
      this.unknownTokenCalls++;
      return this.send(res, 401, { code: 'INVALID_TOKEN', message: 'unknown access token' }, {}, this.opts.latencyMs);
    }
    const s = this.sellers.get(issued.sellerId)!;
    const c = s.counters;
    const announced = s.rule.announced;
    const ruleHeaders = { 'X-Mkt-RateLimit-Limit': String(announced.max), 'X-Mkt-RateLimit-Window': String(announced.windowMs / 1000) };
    const answer = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      this.send(res, status, body, { ...ruleHeaders, ...headers }, this.opts.latencyMs);
    c.calls++;
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    s.keepBody(body);

    if (issued.generation !== s.generation) {
      c.invalidTokenCalls++;
      return answer(401, { code: 'INVALID_TOKEN', message: 'the access token was revoked' });
    }
    if (arrivedAt >= issued.expiresAt) {
      c.expiredTokenCalls++;
      return answer(401, { code: 'TOKEN_EXPIRED', message: 'the access token expired' });
    }
    const requestId = req.headers['x-request-id'];
    if (typeof requestId !== 'string' || requestId === '' || requestId.length > 255) {
      c.invalid++;
      return answer(400, { code: 'VALIDATION_ERROR', message: 'X-Request-Id must be 1-255 characters', field: 'X-Request-Id' });
    }
    const previous = s.byRequestId.get(requestId);
    if (previous) {
      if (previous.status === 200) c.replays++;
      return answer(previous.status, previous.body);
    }

    const rule = s.rule.enforcedAt(arrivedAt);
    c.arrivals.push(arrivedAt);
    s.seen.tryAdmit(arrivedAt, Number.MAX_SAFE_INTEGER, rule.windowMs);
    const admitted = s.admitted.tryAdmit(arrivedAt, rule.max, rule.windowMs);
    if (!admitted.admitted) {
      c.tooMany++;
      this.opts.log?.warn({ sellerId: s.id, requestId }, 'mock marketplace: 429, the seller is over its rule');
      return answer(429, { code: 'RATE_LIMITED', message: `at most ${rule.max} products per ${rule.windowMs / 1000} s` }, { 'Retry-After': String(Math.ceil(admitted.retryAfterMs / 1000)) });
    }

    const problem = marketplaceProductProblem(body, this.invalidCategories);
    let result: { status: number; body: Record<string, unknown> };
    if (problem) {
      c.invalid++;
      result = { status: 400, body: { code: 'VALIDATION_ERROR', message: problem.message, field: problem.field } };
    } else {
      const code = String((body as Record<string, unknown>).sellerProductCode);
      const existing = s.byCode.get(code);
      if (existing) {
        c.duplicates++;
        result = { status: 409, body: { code: 'DUPLICATE_PRODUCT', message: `the seller already has product code ${code}`, existingProductNo: existing } };
      } else {
        const productNo = String(this.nextProductNo++);
        s.byCode.set(code, productNo);
        c.registered++;
        result = { status: 200, body: { productNo } };
      }
    }
    s.byRequestId.set(requestId, result);
    answer(result.status, result.body);
  }
}

/** Compares a signature in constant time; false for anything that is not hex of the right length. */
function matches(given: unknown, expected: string): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given.toLowerCase()), Buffer.from(expected));
}
