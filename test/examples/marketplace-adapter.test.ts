import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkOutcome, checkRequest, checkTokenOutcome,
  type Adapter, type AdapterAnswer, type AdapterCall, type AdapterRequest,
} from '../../src/registration/adapter.js';
import { loadAdapter } from '../../src/registration/load-adapter.js';
import { MockMarketplace } from '../../src/mock-api/marketplace.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

const EXAMPLE = join(PACKAGE_ROOT, 'examples', 'marketplace-adapter.mjs');
const adapter = ((await import(pathToFileURL(EXAMPLE).href)) as { default: Adapter }).default;
const tokenRequest = adapter.tokenRequest!;
const tokenOutcome = adapter.tokenOutcome!;
const CREDENTIALS = { clientId: 'demo-S1', clientSecret: 'demo-secret-S1' };
const NOW = 1_760_000_000_000;

const callOf = (over: Partial<AdapterCall> = {}): AdapterCall => ({
  sellerId: 'S1', uploadId: 'up1', row: 2, idempotencyKey: 'up1:2',
  product: { sku: 'A-1', name: 'Mug', price: 12000, stock: 3, category: 'C01' },
  attributes: {}, credentials: CREDENTIALS, token: 'tok-1', now: NOW,
  ...over,
});
const answerOf = (status: number, body: unknown, headers: Record<string, string> = {}): AdapterAnswer => ({ status, headers, body });

/** outcome() of the example, run through the pool's check: it must pass unchanged. */
async function outcomeOf(answer: AdapterAnswer) {
  const o = await adapter.outcome(answer);
  expect(checkOutcome(o)).toEqual(JSON.parse(JSON.stringify(o)));
  return o;
}
async function tokenOutcomeOf(answer: AdapterAnswer) {
  const o = await tokenOutcome(answer);
  expect(checkTokenOutcome(o)).toEqual(JSON.parse(JSON.stringify(o)));
  return o;
}

describe('the example adapter, as a module', () => {
  it('loads through REGISTRATION_ADAPTER as an adapter with tokens, of a marketplace that announces every seller\'s rule', async () => {
    const loaded = await loadAdapter({ registrationAdapter: 'examples/marketplace-adapter.mjs', registrationToken: undefined }, PACKAGE_ROOT);
    expect(loaded).toMatchObject({ name: 'adapter marketplace-adapter.mjs', builtin: false, tokens: true, announcesRules: true });
    expect(loaded.adapter).toBe(adapter);
  });
});

describe('the example adapter: tokens', () => {
  it('signs clientId.timestamp with the secret (HMAC-SHA256, hex)', async () => {
    const req = checkRequest(await tokenRequest({ sellerId: 'S1', credentials: CREDENTIALS, now: NOW }), 'tokenRequest()');
    const signature = createHmac('sha256', 'demo-secret-S1').update(`demo-S1.${NOW}`).digest('hex');
    expect(req).toEqual({ method: 'POST', path: '/oauth/token', headers: {}, body: { clientId: 'demo-S1', timestamp: NOW, signature } });
  });

  it('sends missing credentials as they are, for the marketplace to refuse', async () => {
    const req = checkRequest(await tokenRequest({ sellerId: 'S9', credentials: undefined, now: NOW }), 'tokenRequest()');
    expect(req.body).toMatchObject({ clientId: '', timestamp: NOW });
  });

  it('maps 200 to a token, 401 to unauthorized, 429 to throttled and anything else to transient', async () => {
    expect(await tokenOutcomeOf(answerOf(200, { access_token: 'mkt_1', token_type: 'Bearer', expires_in: 1.5 }))).toEqual({ token: 'mkt_1', expiresInMs: 1500 });
    expect(await tokenOutcomeOf(answerOf(401, { code: 'INVALID_CLIENT', message: 'bad signature' }))).toEqual({ kind: 'unauthorized', reason: 'INVALID_CLIENT: bad signature' });
    expect(await tokenOutcomeOf(answerOf(429, { code: 'TOO_MANY_TOKEN_REQUESTS' }, { 'retry-after': '30' }))).toEqual({ kind: 'throttled', retryAfterMs: 30_000 });
    expect(await tokenOutcomeOf(answerOf(429, {}))).toMatchObject({ kind: 'throttled', retryAfterMs: undefined });
    expect(await tokenOutcomeOf(answerOf(503, 'Service Unavailable'))).toEqual({ kind: 'transient', reason: 'the marketplace answered 503' });
    expect(await tokenOutcomeOf(answerOf(200, { token_type: 'Bearer' }))).toMatchObject({ kind: 'transient' });
  });
});

describe('the example adapter: request', () => {
  it("renames every field to the marketplace's, puts the extra columns in extras, and sends the token and the key", async () => {
    const call = callOf({
      product: { sku: 'A-1', name: 'Mug', price: 12000, stock: 3, category: 'C01', brand: 'Acme', description: '<p>big</p>', imageUrl: 'https://img/a.png' },
      attributes: { Color: 'red', '소재': 'steel' },
    });
    expect(checkRequest(await adapter.request(call), 'request()')).toEqual({
      method: 'POST', path: '/v2/products',
      headers: { Authorization: 'Bearer tok-1', 'X-Request-Id': 'up1:2' },
      body: {
        sellerProductCode: 'A-1', productName: 'Mug', salePrice: 12000, stockQuantity: 3, categoryId: 'C01',
        brandName: 'Acme', detailHtml: '<p>big</p>', mainImageUrl: 'https://img/a.png', extras: { Color: 'red', '소재': 'steel' },
      },
    });
  });

  it('leaves out optional fields the row lacks, and extras when there are no extra columns', async () => {
    const req = checkRequest(await adapter.request(callOf()), 'request()');
    expect(req.body).toEqual({ sellerProductCode: 'A-1', productName: 'Mug', salePrice: 12000, stockQuantity: 3, categoryId: 'C01' });
  });
});

describe('the example adapter: outcome', () => {
  it('maps every answer of the marketplace to an outcome of marketplace.md', async () => {
    expect(await outcomeOf(answerOf(200, { productNo: '1000000001' }))).toEqual({ kind: 'registered', productId: '1000000001' });
    expect(await outcomeOf(answerOf(409, { code: 'DUPLICATE_PRODUCT', message: 'the seller already has product code A-1', existingProductNo: '1000000001' })))
      .toEqual({ kind: 'duplicate', productId: '1000000001', reason: 'DUPLICATE_PRODUCT: the seller already has product code A-1' });
    expect(await outcomeOf(answerOf(400, { code: 'VALIDATION_ERROR', message: 'salePrice must be a whole number', field: 'salePrice' })))
      .toEqual({ kind: 'invalid', reason: 'salePrice must be a whole number', field: 'price' });
    expect(await outcomeOf(answerOf(401, { code: 'TOKEN_EXPIRED', message: 'the access token expired' }))).toEqual({ kind: 'unauthorized', reason: 'TOKEN_EXPIRED: the access token expired' });
    expect(await outcomeOf(answerOf(401, { code: 'INVALID_TOKEN' }))).toEqual({ kind: 'unauthorized', reason: 'INVALID_TOKEN' });
    expect(await outcomeOf(answerOf(429, { code: 'RATE_LIMITED' }, { 'retry-after': '2' }))).toEqual({ kind: 'throttled', retryAfterMs: 2000 });
    expect(await outcomeOf(answerOf(500, { code: 'INTERNAL' }))).toEqual({ kind: 'transient', reason: 'INTERNAL' });
    expect(await outcomeOf(answerOf(502, '<html>Bad Gateway</html>'))).toEqual({ kind: 'transient', reason: 'the marketplace answered 502' });
    expect(await outcomeOf(answerOf(200, {}))).toMatchObject({ kind: 'transient' });
  });

  it("keeps the marketplace's field name where ours has none", async () => {
    expect(await outcomeOf(answerOf(400, { code: 'VALIDATION_ERROR', message: 'extras.Color must be text', field: 'extras.Color' }))).toMatchObject({ field: 'extras.Color' });
    expect(await outcomeOf(answerOf(400, { code: 'VALIDATION_ERROR', message: 'bad' }))).toEqual({ kind: 'invalid', reason: 'bad', field: undefined });
  });

  it('adds the rule announced in X-Mkt-RateLimit-Limit / -Window to any outcome, and none when absent or unreadable', async () => {
    const rule = { 'x-mkt-ratelimit-limit': '40', 'x-mkt-ratelimit-window': '1.5' };
    expect(await outcomeOf(answerOf(200, { productNo: '7' }, rule))).toEqual({ kind: 'registered', productId: '7', rule: { max: 40, windowMs: 1500 } });
    expect(await outcomeOf(answerOf(429, {}, { ...rule, 'retry-after': '1' }))).toEqual({ kind: 'throttled', retryAfterMs: 1000, rule: { max: 40, windowMs: 1500 } });
    expect(await outcomeOf(answerOf(200, { productNo: '7' }, { 'x-mkt-ratelimit-limit': 'many', 'x-mkt-ratelimit-window': '60' }))).not.toHaveProperty('rule');
    expect(await outcomeOf(answerOf(200, { productNo: '7' }, { 'x-mkt-ratelimit-limit': '40' }))).not.toHaveProperty('rule');
  });
});

describe('the example adapter against the marketplace stand-in, over HTTP', () => {
  const open: MockMarketplace[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((m) => m.close()));
  });

  /** What the pool does with a request: send it, and hand the answer back with lower-case headers and a parsed body. */
  async function send(base: string, request: AdapterRequest): Promise<AdapterAnswer> {
    const res = await fetch(request.url ?? `${base}${request.path}`, {
      method: request.method,
      headers: { 'Content-Type': 'application/json', ...request.headers },
      body: typeof request.body === 'string' ? request.body : JSON.stringify(request.body),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the text
    }
    return { status: res.status, headers: Object.fromEntries([...res.headers].map(([k, v]) => [k.toLowerCase(), v])), body };
  }

  it('gets a token, registers, replays, and meets an expired token, a rotated secret and the rule', async () => {
    const clock = { t: NOW };
    const mkt = new MockMarketplace({
      clients: { S1: CREDENTIALS },
      sellerRules: { S1: { max: 3, windowMs: 60_000 } },
      tokenLifetimeMs: 60_000,
      invalidCategories: ['C99'],
      now: () => clock.t,
    });
    open.push(mkt);
    const base = `http://127.0.0.1:${await mkt.listen(0)}`;
    const getToken = async () => checkTokenOutcome(tokenOutcome(await send(base, checkRequest(await tokenRequest({ sellerId: 'S1', credentials: CREDENTIALS, now: clock.t }), 'tokenRequest()'))));
    const register = async (call: AdapterCall) => checkOutcome(await adapter.outcome(await send(base, checkRequest(await adapter.request(call), 'request()'))));

    const got = await getToken();
    expect(got).toEqual({ token: expect.any(String), expiresInMs: 60_000 });
    const token = (got as { token: string }).token;
    const rule = { max: 3, windowMs: 60_000 };

    const first = await register(callOf({ token, attributes: { Color: 'red' } }));
    expect(first).toEqual({ kind: 'registered', productId: expect.stringMatching(/^\d+$/), rule });
    expect(mkt.stats().sellers.S1!.recentBodies[0]).toMatchObject({ sellerProductCode: 'A-1', extras: { Color: 'red' } });

    // the same row again (a retry after a lost answer): the same product, not counted
    expect(await register(callOf({ token, attributes: { Color: 'red' } }))).toEqual(first);
    // the same code in another upload: a duplicate naming the product
    expect(await register(callOf({ token, idempotencyKey: 'up2:2' }))).toEqual({ kind: 'duplicate', productId: (first as { productId: string }).productId, reason: expect.stringMatching(/^DUPLICATE_PRODUCT: /), rule });
    // a category the marketplace lacks: invalid, on our field
    expect(await register(callOf({ token, idempotencyKey: 'up1:3', product: { sku: 'A-3', name: 'Cup', price: 1, stock: 1, category: 'C99' } })))
      .toEqual({ kind: 'invalid', reason: 'category C99 does not exist', field: 'category', rule });
    // over the seller's rule (3 counted: the first, the duplicate and the invalid one)
    expect(await register(callOf({ token, idempotencyKey: 'up1:4', product: { sku: 'A-4', name: 'Cup', price: 1, stock: 1, category: 'C01' } })))
      .toEqual({ kind: 'throttled', retryAfterMs: 60_000, rule });

    clock.t += 60_000;
    expect(await register(callOf({ token, idempotencyKey: 'up1:4' }))).toEqual({ kind: 'unauthorized', reason: 'TOKEN_EXPIRED: the access token expired', rule });
    const fresh = (await getToken()) as { token: string };
    expect(await register(callOf({ token: fresh.token, idempotencyKey: 'up1:4', product: { sku: 'A-4', name: 'Cup', price: 1, stock: 1, category: 'C01' } })))
      .toMatchObject({ kind: 'registered' });

    mkt.rotateSecret('S1', 'rotated');
    expect(await register(callOf({ token: fresh.token, idempotencyKey: 'up1:5' }))).toEqual({ kind: 'unauthorized', reason: 'INVALID_TOKEN: the access token was revoked', rule });
    expect(await getToken()).toEqual({ kind: 'unauthorized', reason: 'INVALID_CLIENT: the client secret was revoked' });

    expect(mkt.stats().sellers.S1).toMatchObject({ registered: 2, replays: 1, duplicates: 1, invalid: 1, tooMany: 1, expiredTokenCalls: 1, invalidTokenCalls: 1, tokensIssued: 2 });
  });
});
