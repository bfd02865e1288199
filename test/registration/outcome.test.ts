import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, outcomeOfError, parseRetryAfter, throttleWaitMs } from '../../src/registration/outcome.js';
import { builtinAdapter, builtinOutcome, parseRateLimitPolicy } from '../../src/registration/builtin-adapter.js';
import { checkOutcome, checkRequest, checkTokenOutcome } from '../../src/registration/adapter.js';

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({ status, body, headers });

describe('the built-in adapter (registration-api.md)', () => {
  it('maps every response class', () => {
    expect(builtinOutcome(answer(201, { productId: 'P1' }), 0)).toEqual({ kind: 'registered', productId: 'P1' });
    expect(builtinOutcome(answer(200, { productId: 'P1' }), 0)).toEqual({ kind: 'registered', productId: 'P1' });
    expect(builtinOutcome(answer(422, { error: 'price too high', field: 'price' }), 0)).toEqual({ kind: 'invalid', reason: 'price too high', field: 'price' });
    expect(builtinOutcome(answer(400, 'garbage'), 0)).toMatchObject({ kind: 'invalid' });
    expect(builtinOutcome(answer(409, { error: 'dup', productId: 'P9' }), 0)).toEqual({ kind: 'duplicate', productId: 'P9', reason: 'dup' });
    expect(builtinOutcome(answer(429, {}, { 'retry-after': '3' }), 0)).toEqual({ kind: 'throttled', retryAfterMs: 3000 });
    expect(builtinOutcome(answer(503, { error: 'down' }), 0)).toEqual({ kind: 'transient', reason: 'the API answered 503: down' });
    expect(builtinOutcome(answer(201, {}), 0)).toMatchObject({ kind: 'transient' });
    expect(builtinOutcome(answer(401, { error: 'bad key' }), 0)).toEqual({ kind: 'unauthorized', reason: 'the API answered 401: bad key' });
    expect(builtinOutcome(answer(403, {}), 0)).toEqual({ kind: 'unauthorized', reason: 'the API answered 403' });
  });

  it('keeps the API\'s message of a text, HTML, empty or nested answer, and a productId sent as a number', () => {
    expect(builtinOutcome(answer(400, 'price must be at most 1000000\n'), 0)).toEqual({ kind: 'invalid', reason: 'price must be at most 1000000' });
    expect(builtinOutcome(answer(422, '<html><head><title>x</title><style>p{}</style></head><body><p>Unprocessable:&nbsp;name &amp; brand too long</p></body></html>'), 0))
      .toEqual({ kind: 'invalid', reason: 'Unprocessable: name & brand too long' });
    expect(builtinOutcome(answer(400, ''), 0)).toEqual({ kind: 'invalid', reason: 'the API rejected the product (400 Bad Request) without saying why' });
    expect(builtinOutcome(answer(400, { error: { code: 'PRICE_RANGE', message: 'price out of range' }, field: 'price' }), 0)).toEqual({ kind: 'invalid', reason: 'price out of range', field: 'price' });
    expect(builtinOutcome(answer(400, { message: 'stock must be positive', field: 'stock' }), 0)).toEqual({ kind: 'invalid', reason: 'stock must be positive', field: 'stock' });
    expect(builtinOutcome(answer(422, { errors: [{ message: 'brand is unknown' }] }), 0)).toEqual({ kind: 'invalid', reason: 'brand is unknown' });
    const long = builtinOutcome(answer(400, `<p>${'word '.repeat(200)}</p>`), 0) as { reason: string };
    expect(long.reason.length).toBeLessThanOrEqual(300);
    expect(long.reason.endsWith('…')).toBe(true);
    expect(builtinOutcome(answer(502, '<html>Bad Gateway</html>'), 0)).toEqual({ kind: 'transient', reason: 'the API answered 502: Bad Gateway' });
    expect(builtinOutcome(answer(409, { error: 'the seller already has this SKU', productId: 777 }), 0)).toEqual({ kind: 'duplicate', productId: '777', reason: 'the seller already has this SKU' });
    expect(builtinOutcome(answer(201, { productId: 12345 }), 0)).toEqual({ kind: 'registered', productId: '12345' });
    expect(builtinOutcome(answer(200, { productId: 12345 }), 0)).toEqual({ kind: 'registered', productId: '12345' });
  });

  it('reads the rule announced in RateLimit-Policy, in either draft form', () => {
    expect(parseRateLimitPolicy('100;w=60')).toEqual({ max: 100, windowMs: 60_000 });
    expect(parseRateLimitPolicy('"default";q=50;w=2, "day";q=1000;w=86400')).toEqual({ max: 50, windowMs: 2000 });
    expect(parseRateLimitPolicy('garbage')).toBeUndefined();
    expect(parseRateLimitPolicy('10')).toBeUndefined();
    expect(builtinOutcome(answer(201, { productId: 'P1' }, { 'ratelimit-policy': '40;w=1' }), 0)).toEqual({ kind: 'registered', productId: 'P1', rule: { max: 40, windowMs: 1000 } });
  });

  it('sends the product with the idempotency key and the seller\'s bearer token, the static one otherwise', async () => {
    const call = { sellerId: 'S 1', uploadId: 'u', row: 2, idempotencyKey: 'u:2', product: { sku: 'a', name: 'n', price: 1, stock: 0, category: 'c' }, attributes: {}, credentials: undefined, now: 0 };
    const plain = checkRequest(await builtinAdapter().request(call), 'request()');
    expect(plain).toEqual({ method: 'POST', path: '/sellers/S%201/products', headers: { 'Idempotency-Key': 'u:2' }, body: call.product });
    const withStatic = await builtinAdapter({ registrationToken: 'static-1' }).request(call);
    expect(withStatic.headers?.Authorization).toBe('Bearer static-1');
    const withOwn = await builtinAdapter({ registrationToken: 'static-1' }).request({ ...call, credentials: { token: 'own-2' } });
    expect(withOwn.headers?.Authorization).toBe('Bearer own-2');
  });

  it('reads Retry-After as seconds or an HTTP date, none when missing or unreadable', () => {
    expect(parseRetryAfter('2', 0)).toBe(2000);
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter('-5', 0)).toBeUndefined();
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(builtinOutcome(answer(429, {}), 0)).toEqual({ kind: 'throttled' });
  });

  it('makes a throttled seller wait its Retry-After up to an hour, else one window of its rule (W + G)', () => {
    // 1000000000000000 s failed the row with a Redis error; 100000000000 s blocked the seller for 3,000 years
    for (const seconds of ['1000000000000000', '100000000000', '3601']) {
      const retryAfterMs = builtinOutcome(answer(429, {}, { 'retry-after': seconds }), 0).kind === 'throttled' ? parseRetryAfter(seconds, 0) : -1;
      expect(throttleWaitMs(retryAfterMs, 2000, 100)).toEqual({ waitMs: MAX_RETRY_AFTER_MS, clamped: true });
    }
    expect(MAX_RETRY_AFTER_MS).toBe(3_600_000);
    expect(throttleWaitMs(3_600_000, 2000, 100)).toEqual({ waitMs: 3_600_000, clamped: false });
    expect(throttleWaitMs(3000, 2000, 100)).toEqual({ waitMs: 3000, clamped: false });
    expect(throttleWaitMs(0, 2000, 100)).toEqual({ waitMs: 0, clamped: false });
    // no Retry-After: one window of the seller's rule and its guard, not a fixed second
    expect(throttleWaitMs(undefined, 2000, 100)).toEqual({ waitMs: 2100, clamped: false });
    expect(throttleWaitMs(undefined, 60_000, 500)).toEqual({ waitMs: 60_500, clamped: false });
    // an adapter's own retryAfterMs is held to the same bound
    const own = checkOutcome({ kind: 'throttled', retryAfterMs: 1e18 });
    expect(throttleWaitMs(own.kind === 'throttled' ? own.retryAfterMs : undefined, 2000, 100)).toEqual({ waitMs: MAX_RETRY_AFTER_MS, clamped: true });
  });

  it('turns request errors into transient outcomes a seller can read', () => {
    expect(outcomeOfError({ code: 'ECONNABORTED' }, 10_000)).toEqual({ kind: 'transient', reason: 'the API did not answer within 10000 ms' });
    expect(outcomeOfError({ code: 'ECONNRESET' }, 1)).toMatchObject({ reason: expect.stringContaining('dropped') });
    expect(outcomeOfError({ code: 'ECONNREFUSED' }, 1)).toMatchObject({ kind: 'transient' });
  });
});

describe('what an adapter returns is checked', () => {
  it('refuses what is not an outcome, naming what is wrong and never the value', () => {
    expect(() => checkOutcome(undefined)).toThrow('outcome() returned undefined, not an outcome object');
    expect(() => checkOutcome({ kind: 'registered' })).toThrow(/without a productId/);
    expect(() => checkOutcome({ kind: 'ok', secret: 'hunter22' })).toThrow(/not one of registered/);
    expect(() => checkOutcome({ kind: 'invalid' })).toThrow(/without a reason/);
    expect(() => checkOutcome({ kind: 'registered', productId: 'P', rule: { max: 0, windowMs: 1 } })).toThrow(/rule/);
    expect(checkOutcome({ kind: 'registered', productId: 7 })).toEqual({ kind: 'registered', productId: '7' });
    expect(checkOutcome({ kind: 'throttled' })).toEqual({ kind: 'throttled' });
  });

  it('refuses a request without a method or a target', () => {
    expect(() => checkRequest({ path: '/x' }, 'request()')).toThrow(/method/);
    expect(() => checkRequest({ method: 'post' }, 'request()')).toThrow(/neither path nor url/);
    expect(() => checkRequest({ method: 'post', url: 'ftp://x' }, 'request()')).toThrow(/http/);
    expect(checkRequest({ method: 'post', path: '/x', headers: { a: 1 } }, 'request()')).toEqual({ method: 'POST', path: '/x', headers: { a: '1' } });
  });

  it('takes a token or a refusal from tokenOutcome', () => {
    expect(checkTokenOutcome({ token: 't', expiresInMs: 60_000 })).toEqual({ token: 't', expiresInMs: 60_000 });
    expect(checkTokenOutcome({ kind: 'unauthorized', reason: 'bad secret' })).toEqual({ kind: 'unauthorized', reason: 'bad secret' });
    expect(() => checkTokenOutcome({ token: 't' })).toThrow(/expiresInMs/);
    expect(() => checkTokenOutcome({ kind: 'registered', productId: 'x' })).toThrow(/expected a token/);
  });
});
