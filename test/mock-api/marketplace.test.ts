import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { marketplaceFromEnv } from '../../src/cli/mock-api.js';
import { MockMarketplace, type MockMarketplaceOptions } from '../../src/mock-api/marketplace.js';
import { RuleSchedule } from '../../src/mock-api/marketplace-seller.js';
import { marketplaceProductProblem } from '../../src/mock-api/marketplace-product.js';

const CLIENTS = {
  S1: { clientId: 'demo-S1', clientSecret: 'demo-secret-S1' },
  S2: { clientId: 'demo-S2', clientSecret: 'demo-secret-S2' },
};
const START = 1_760_000_000_000;
const PRODUCT = { sellerProductCode: 'A-1', productName: 'Mug', salePrice: 12000, stockQuantity: 3, categoryId: 'C01' };

const open: MockMarketplace[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});

/** A stand-in on port 0 whose clock the test moves (`clock.t`). */
async function start(opts: Partial<MockMarketplaceOptions> = {}) {
  const clock = { t: START };
  const mkt = new MockMarketplace({ clients: CLIENTS, now: () => clock.t, ...opts });
  open.push(mkt);
  const base = `http://127.0.0.1:${await mkt.listen(0)}`;
  const sign = (clientId: string, secret: string, timestamp: number) => createHmac('sha256', secret).update(`${clientId}.${timestamp}`).digest('hex');
  const tokenCall = async (body: Record<string, unknown>) => {
    const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  const signedToken = (clientId: string, secret: string, timestamp = clock.t) => tokenCall({ clientId, timestamp, signature: sign(clientId, secret, timestamp) });
  const token = async (seller: 'S1' | 'S2' = 'S1') => {
    const r = await signedToken(CLIENTS[seller].clientId, CLIENTS[seller].clientSecret);
    expect(r.status).toBe(200);
    return r.body.access_token as string;
  };
  const register = async (token: string, requestId: string, body: unknown = PRODUCT) => {
    const res = await fetch(`${base}/v2/products`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, 'X-Request-Id': requestId },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  return { mkt, base, clock, tokenCall, signedToken, token, register };
}

describe('the marketplace stand-in: tokens', () => {
  it('issues a Bearer token for a signed request, with its lifetime in (fractional) seconds', async () => {
    const m = await start({ tokenLifetimeMs: 1500 });
    const r = await m.signedToken('demo-S1', 'demo-secret-S1');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ access_token: expect.stringMatching(/^\S{20,}$/), token_type: 'Bearer', expires_in: 1.5 });
    const s = m.mkt.stats().sellers.S1!;
    expect(s).toMatchObject({ tokenRequests: 1, tokensIssued: 1, tokenRequestTimes: [START] });
  });

  it('refuses an unknown client, a bad signature and a timestamp more than 5 minutes off with 401 INVALID_CLIENT', async () => {
    const m = await start();
    const refusals = [
      await m.signedToken('nobody', 'demo-secret-S1'),
      await m.signedToken('demo-S1', 'wrong-secret'),
      await m.signedToken('demo-S1', 'demo-secret-S1', START - 5 * 60_000 - 1),
      await m.signedToken('demo-S1', 'demo-secret-S1', START + 5 * 60_000 + 1),
      await m.tokenCall({ clientId: 'demo-S1', timestamp: START }),
    ];
    for (const r of refusals) expect(r).toMatchObject({ status: 401, body: { code: 'INVALID_CLIENT', message: expect.any(String) } });
    // exactly 5 minutes off is still accepted
    expect((await m.signedToken('demo-S1', 'demo-secret-S1', START - 5 * 60_000)).status).toBe(200);
    const stats = m.mkt.stats();
    expect(stats.unknownClientTokenRequests).toBe(1);
    expect(stats.sellers.S1).toMatchObject({ tokenRequests: 5, tokenRefused: 4, tokensIssued: 1 });
  });

  it("answers 429 TOO_MANY_TOKEN_REQUESTS with Retry-After over the client's token rule, and counts per client", async () => {
    const m = await start({ tokenRule: { max: 2, windowMs: 60_000 } });
    await m.token();
    m.clock.t += 20_000;
    await m.token();
    const over = await m.signedToken('demo-S1', 'demo-secret-S1');
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('TOO_MANY_TOKEN_REQUESTS');
    expect(over.headers.get('retry-after')).toBe('40');
    await m.token('S2'); // another client is not affected
    m.clock.t += 40_000;
    await m.token();
    expect(m.mkt.stats().sellers.S1).toMatchObject({ tokenRequests: 4, tokenThrottled: 1, tokensIssued: 3 });
  });

  it('counts the token requests of one seller being handled at once', async () => {
    const m = await start({ tokenLatencyMs: { min: 80, max: 80 } });
    await Promise.all([m.token(), m.token(), m.token()]);
    await m.token('S2');
    await m.token('S2');
    const { sellers } = m.mkt.stats();
    expect(sellers.S1!.concurrentTokenRequestsMax).toBe(3);
    expect(sellers.S2!.concurrentTokenRequestsMax).toBe(1);
  });

  it('answers 401 TOKEN_EXPIRED once the lifetime has passed, still announcing the rule', async () => {
    const m = await start({ tokenLifetimeMs: 10_000 });
    const token = await m.token();
    m.clock.t += 9_999;
    expect((await m.register(token, 'u:1')).status).toBe(200);
    m.clock.t += 1;
    const expired = await m.register(token, 'u:2', { ...PRODUCT, sellerProductCode: 'A-2' });
    expect(expired).toMatchObject({ status: 401, body: { code: 'TOKEN_EXPIRED' } });
    expect(expired.headers.get('x-mkt-ratelimit-limit')).toBe('100');
    expect(m.mkt.stats().sellers.S1).toMatchObject({ calls: 2, registered: 1, expiredTokenCalls: 1, arrivals: [START + 9_999] });
  });

  it('after rotateSecret refuses the old secret and every token issued under it, and takes the new one', async () => {
    const m = await start();
    const old = await m.token();
    m.mkt.rotateSecret('S1', 'rotated-S1');
    expect(await m.register(old, 'u:1')).toMatchObject({ status: 401, body: { code: 'INVALID_TOKEN' } });
    const refused = await m.signedToken('demo-S1', 'demo-secret-S1');
    expect(refused).toMatchObject({ status: 401, body: { code: 'INVALID_CLIENT', message: 'the client secret was revoked' } });
    const fresh = await m.signedToken('demo-S1', 'rotated-S1');
    expect(fresh.status).toBe(200);
    expect((await m.register(fresh.body.access_token as string, 'u:1')).status).toBe(200);
    // S2's tokens are untouched
    expect((await m.register(await m.token('S2'), 'u:1')).status).toBe(200);
    expect(m.mkt.stats().sellers.S1).toMatchObject({ invalidTokenCalls: 1, tokenRefused: 1, registered: 1 });
  });

  it('answers 401 INVALID_TOKEN to an unknown token, without a seller to announce a rule for', async () => {
    const m = await start();
    const r = await m.register('mkt_never_issued', 'u:1');
    expect(r).toMatchObject({ status: 401, body: { code: 'INVALID_TOKEN' } });
    expect(r.headers.get('x-mkt-ratelimit-limit')).toBeNull();
    expect(m.mkt.stats().unknownTokenCalls).toBe(1);
  });

  it('revokeTokens and expireTokens end the current tokens and leave the secret valid', async () => {
    const m = await start();
    const a = await m.token();
    m.mkt.expireTokens('S1');
    expect((await m.register(a, 'u:1')).body.code).toBe('TOKEN_EXPIRED');
    const b = await m.token();
    m.mkt.revokeTokens('S1');
    expect((await m.register(b, 'u:1')).body.code).toBe('INVALID_TOKEN');
    expect((await m.register(await m.token(), 'u:1')).status).toBe(200);
  });
});

describe('the marketplace stand-in: products', () => {
  it('registers, answers a replay of the same X-Request-Id with the same productNo without counting it, and keeps the bodies', async () => {
    const m = await start();
    const token = await m.token();
    const body = { ...PRODUCT, extras: { Color: 'red', 'Material (main)': 'steel' } };
    const first = await m.register(token, 'up1:2', body);
    expect(first.status).toBe(200);
    expect(first.body.productNo).toMatch(/^\d+$/);
    m.clock.t += 1000;
    const replay = await m.register(token, 'up1:2', body);
    expect(replay).toMatchObject({ status: 200, body: { productNo: first.body.productNo } });
    const s = m.mkt.stats().sellers.S1!;
    expect(s).toMatchObject({ calls: 2, registered: 1, replays: 1, arrivals: [START] });
    expect(s.recentBodies).toEqual([body, body]);
  });

  it('answers 409 DUPLICATE_PRODUCT with the existing productNo for a product code under another request id', async () => {
    const m = await start();
    const token = await m.token();
    const first = await m.register(token, 'up1:2');
    const dup = await m.register(token, 'up2:2');
    expect(dup).toMatchObject({ status: 409, body: { code: 'DUPLICATE_PRODUCT', existingProductNo: first.body.productNo } });
    // the same code of another seller is not a duplicate
    expect((await m.register(await m.token('S2'), 'up3:2')).status).toBe(200);
    expect(m.mkt.stats().sellers.S1!.duplicates).toBe(1);
  });

  it("answers 400 VALIDATION_ERROR naming the marketplace's field", async () => {
    const m = await start({ invalidCategories: ['C99'] });
    const token = await m.token();
    const cases: Array<[unknown, string]> = [
      [{ ...PRODUCT, salePrice: 0 }, 'salePrice'],
      [{ ...PRODUCT, categoryId: 'C99' }, 'categoryId'],
      [{ ...PRODUCT, extras: { Color: 3 } }, 'extras.Color'],
      ['not a product', 'body'],
    ];
    for (const [i, [body, field]] of cases.entries()) {
      expect(await m.register(token, `up:${i}`, body)).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', field, message: expect.any(String) } });
    }
    const noId = await fetch(`${m.base}/v2/products`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: JSON.stringify(PRODUCT) });
    expect(await noId.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'X-Request-Id' });
    expect(m.mkt.stats().sellers.S1!.invalid).toBe(5);
  });

  it('answers 429 RATE_LIMITED with Retry-After over the rule by arrival time, and announces the rule on every answer', async () => {
    const m = await start({ rule: { max: 100, windowMs: 60_000 }, sellerRules: { S1: { max: 2, windowMs: 1500 } } });
    const token = await m.token();
    const answers = [];
    for (let i = 0; i < 3; i++) {
      answers.push(await m.register(token, `u:${i}`, { ...PRODUCT, sellerProductCode: `A-${i}` }));
      m.clock.t += 500;
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(answers[2]!.body.code).toBe('RATE_LIMITED');
    expect(answers[2]!.headers.get('retry-after')).toBe('1'); // 500 ms, in whole seconds
    for (const a of answers) {
      expect(a.headers.get('x-mkt-ratelimit-limit')).toBe('2');
      expect(a.headers.get('x-mkt-ratelimit-window')).toBe('1.5');
    }
    m.clock.t = START + 1500; // the first call has left the window
    expect((await m.register(token, 'u:2', { ...PRODUCT, sellerProductCode: 'A-2' })).status).toBe(200);
    expect(m.mkt.stats().sellers.S1).toMatchObject({ tooMany: 1, registered: 3, maxInWindow: 2, maxArrivalsInWindow: 3 });
    expect((await m.register(await m.token('S2'), 'u:1')).headers.get('x-mkt-ratelimit-limit')).toBe('100');
  });

  it('GET /_stats answers what stats() returns', async () => {
    const m = await start();
    await m.register(await m.token(), 'u:1');
    const res = await fetch(`${m.base}/_stats`);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(m.mkt.stats())));
  });

  it('takes setRule, rotateSecret and token revocation over HTTP too', async () => {
    const m = await start();
    const post = (path: string, body: unknown) => fetch(`${m.base}${path}`, { method: 'POST', body: JSON.stringify(body) });
    expect((await post('/_sellers/S1/rule', { max: 5, windowMs: 2000, enforceAfterMs: 1000 })).status).toBe(200);
    expect(m.mkt.stats().sellers.S1).toMatchObject({ announcedRule: { max: 5, windowMs: 2000 }, enforcedRule: { max: 100, windowMs: 60_000 } });
    const token = await m.token();
    expect((await post('/_sellers/S1/tokens', {})).status).toBe(200);
    expect((await m.register(token, 'u:1')).body.code).toBe('INVALID_TOKEN');
    expect((await post('/_sellers/S1/rotate', { clientSecret: 'new' })).status).toBe(200);
    expect((await m.signedToken('demo-S1', 'new')).status).toBe(200);
    expect((await post('/_sellers/S9/rule', { max: 5, windowMs: 2000 })).status).toBe(400);
  });
});

describe('the marketplace stand-in: a rule announced before it is enforced', () => {
  /**
   * A client that sends as fast as the rule it last saw announced allows (the
   * same sliding window by arrival), moving the clock instead of sleeping.
   * Returns the statuses of `calls` calls; `midway` runs after call `at`.
   */
  async function obeyingClient(m: Awaited<ReturnType<typeof start>>, calls: number, at: number, midway: () => void): Promise<number[]> {
    const token = await m.token();
    let known = { max: 10, windowMs: 1000 };
    const sent: number[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < calls; i++) {
      const inWindow = sent.filter((t) => t > m.clock.t - known.windowMs);
      if (inWindow.length >= known.max) m.clock.t = sent[sent.length - known.max]! + known.windowMs;
      sent.push(m.clock.t);
      const r = await m.register(token, `u:${i}`, { ...PRODUCT, sellerProductCode: `A-${i}` });
      statuses.push(r.status);
      known = { max: Number(r.headers.get('x-mkt-ratelimit-limit')), windowMs: Number(r.headers.get('x-mkt-ratelimit-window')) * 1000 };
      if (i === at) midway();
      m.clock.t += 10;
    }
    return statuses;
  }

  it('a client that obeys the announcement meets no 429 when a lower rule is enforced a window later', async () => {
    const m = await start({ rule: { max: 10, windowMs: 1000 } });
    const statuses = await obeyingClient(m, 40, 14, () => m.mkt.setRule('S1', { max: 3, windowMs: 1000 }, { enforceAfterMs: 1000 }));
    expect(statuses.every((s) => s === 200)).toBe(true);
    const s = m.mkt.stats().sellers.S1!;
    expect(s).toMatchObject({ tooMany: 0, registered: 40, announcedRule: { max: 3, windowMs: 1000 }, enforcedRule: { max: 3, windowMs: 1000 } });
    // the lower rule was really enforced from then on: no window after the switch holds more than 3
    const enforcedFrom = s.arrivals[15]! + 1000;
    const later = s.arrivals.filter((t) => t >= enforcedFrom);
    expect(later.length).toBeGreaterThan(5);
    for (const t of later) expect(s.arrivals.filter((u) => u > t - 1000 && u <= t).length).toBeLessThanOrEqual(3);
  });

  it('the same client meets 429 when the lower rule is enforced at once', async () => {
    const m = await start({ rule: { max: 10, windowMs: 1000 } });
    const statuses = await obeyingClient(m, 40, 14, () => m.mkt.setRule('S1', { max: 3, windowMs: 1000 }));
    expect(statuses).toContain(429);
    expect(m.mkt.stats().sellers.S1!.tooMany).toBeGreaterThan(0);
  });
});

describe('the marketplace stand-in: pure parts', () => {
  it('RuleSchedule enforces the old rule until the announced one is due, and a later announcement replaces a pending one', () => {
    const r = new RuleSchedule({ max: 10, windowMs: 1000 });
    r.announce({ max: 3, windowMs: 1000 }, 0, 500);
    expect(r.announced).toEqual({ max: 3, windowMs: 1000 });
    expect(r.enforcedAt(499)).toEqual({ max: 10, windowMs: 1000 });
    expect(r.enforcedAt(500)).toEqual({ max: 3, windowMs: 1000 });
    r.announce({ max: 5, windowMs: 1000 }, 600, 1000);
    r.announce({ max: 7, windowMs: 1000 }, 700, 1000);
    expect(r.enforcedAt(1650)).toEqual({ max: 3, windowMs: 1000 });
    expect(r.enforcedAt(1700)).toEqual({ max: 7, windowMs: 1000 });
  });

  it('accepts every field within its limits and names the first field out of them', () => {
    const full = { ...PRODUCT, brandName: 'B', detailHtml: '<p>x</p>', mainImageUrl: 'https://img/x.png', extras: { Color: 'red' } };
    expect(marketplaceProductProblem(full)).toBeUndefined();
    expect(marketplaceProductProblem({ ...PRODUCT, stockQuantity: 100_000 })?.field).toBe('stockQuantity');
    expect(marketplaceProductProblem({ ...PRODUCT, mainImageUrl: 'ftp://x' })?.field).toBe('mainImageUrl');
    expect(marketplaceProductProblem({ ...PRODUCT, sellerProductCode: '' })?.field).toBe('sellerProductCode');
  });
});

describe('mock-api --marketplace from the environment', () => {
  const config = loadConfig({ RATE_LIMIT_MAX: '7', RATE_LIMIT_WINDOW_MS: '2000' });
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-clients-'));

  it('serves S1..S3 with the demo clients by default, under RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS and MOCK_LIMITS', () => {
    const { sellers } = marketplaceFromEnv(config, { MOCK_LIMITS: 'S2=3/1000' }).stats();
    expect(Object.keys(sellers)).toEqual(['S1', 'S2', 'S3']);
    expect(sellers.S1!.announcedRule).toEqual({ max: 7, windowMs: 2000 });
    expect(sellers.S2!.announcedRule).toEqual({ max: 3, windowMs: 1000 });
  });

  it('reads the clients from MOCK_MARKETPLACE_CLIENTS, and names the variable when the file is wrong', () => {
    const good = join(dir, 'clients.json');
    writeFileSync(good, JSON.stringify({ acme: { clientId: 'acme-id', clientSecret: 'acme-secret' } }));
    expect(Object.keys(marketplaceFromEnv(config, { MOCK_MARKETPLACE_CLIENTS: good }).stats().sellers)).toEqual(['acme']);

    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ acme: { clientId: 'acme-id' } }));
    expect(() => marketplaceFromEnv(config, { MOCK_MARKETPLACE_CLIENTS: bad })).toThrow(/^MOCK_MARKETPLACE_CLIENTS=".*bad\.json" is invalid: clients\.acme must be \{ clientId, clientSecret \}/);
    writeFileSync(bad, '[1, 2');
    expect(() => marketplaceFromEnv(config, { MOCK_MARKETPLACE_CLIENTS: bad })).toThrow(/^MOCK_MARKETPLACE_CLIENTS=".*bad\.json" is invalid: /);
    expect(() => marketplaceFromEnv(config, { MOCK_TOKEN_LIFETIME_MS: '5' })).toThrow(/^MOCK_TOKEN_LIFETIME_MS="5" is invalid/);
  });
});
