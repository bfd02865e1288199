import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockRegistrationApi } from '../../src/mock-api/server.js';

const LATENCY_MS = 120;

describe('the mock API', () => {
  const api = new MockRegistrationApi({ limit: 100, windowMs: 60_000, latencyMs: { min: LATENCY_MS, max: LATENCY_MS } });
  let base = '';
  beforeAll(async () => {
    base = `http://127.0.0.1:${await api.listen(0)}`;
  });
  afterAll(() => api.close());

  const post = (key: string, sku: string) => fetch(`${base}/sellers/S1/products`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify({ sku, name: 'Mug', price: 1000, stock: 3, category: 'kitchen' }),
  });

  it('times a registration at its arrival, and its answer when the 201 is written, the latency later', async () => {
    const sentAt = Date.now();
    const res = await post('k1', 'SKU-1');
    const receivedAt = Date.now();
    expect(res.status).toBe(201);
    expect((await post('k2', 'SKU-1')).status).toBe(409);

    const s = api.sellerStats('S1')!;
    expect(s.registered).toBe(1);
    // only the registration is timed: the duplicate is neither an arrival nor an answer here
    expect(s.times).toHaveLength(1);
    expect(s.answered).toHaveLength(1);
    expect(s.times[0]).toBeGreaterThanOrEqual(sentAt);
    expect(s.answered[0]! - s.times[0]!).toBeGreaterThanOrEqual(LATENCY_MS - 1);
    expect(s.answered[0]).toBeLessThanOrEqual(receivedAt);
    // the stats JSON keeps its shape: arrival times only
    expect(Object.keys(api.statsSnapshot(true).sellers.S1!)).not.toContain('answered');
  });

  it('counts a text\'s characters as the sheet\'s check does (code points): 50 emoji are a valid sku, 51 are not', async () => {
    expect((await post('emoji-50', '🎉'.repeat(50))).status).toBe(201);
    const over = await post('emoji-51', '🎉'.repeat(51));
    expect(over.status).toBe(422);
    expect(await over.json()).toMatchObject({ field: 'sku' });
  });

  it('times a registration after the path latency when one is set, as an API behind a network does', async () => {
    const PATH_MS = 80;
    const far = new MockRegistrationApi({ limit: 100, windowMs: 60_000, pathLatencyMs: { min: PATH_MS, max: PATH_MS } });
    const url = `http://127.0.0.1:${await far.listen(0)}`;
    try {
      const sentAt = Date.now();
      const res = await fetch(`${url}/sellers/S2/products`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'p1' },
        body: JSON.stringify({ sku: 'SKU-P', name: 'Mug', price: 1000, stock: 3, category: 'kitchen' }),
      });
      expect(res.status).toBe(201);
      expect(far.sellerStats('S2')!.times[0]! - sentAt).toBeGreaterThanOrEqual(PATH_MS - 1);
    } finally {
      await far.close();
    }
  });

  it('counts a registration whose caller hung up before its 201 as answered when a replay of it is answered, once', async () => {
    const abort = new AbortController();
    const first = fetch(`${base}/sellers/S3/products`, {
      method: 'POST', signal: abort.signal,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'h1' },
      body: JSON.stringify({ sku: 'SKU-H', name: 'Mug', price: 1000, stock: 3, category: 'kitchen' }),
    }).catch(() => undefined);
    // registered on arrival, then the caller gives up (its timeout) before the 201 is written
    await new Promise((r) => setTimeout(r, LATENCY_MS / 2));
    abort.abort();
    await first;
    await new Promise((r) => setTimeout(r, LATENCY_MS));
    expect(api.sellerStats('S3')!.registered).toBe(1);
    expect(api.sellerStats('S3')!.answered).toHaveLength(0);
    const replay = (key: string) => fetch(`${base}/sellers/S3/products`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify({ sku: 'SKU-H', name: 'Mug', price: 1000, stock: 3, category: 'kitchen' }),
    });
    expect((await replay('h1')).status).toBe(200);
    expect((await replay('h1')).status).toBe(200);
    const s = api.sellerStats('S3')!;
    expect(s.replays).toBe(2);
    expect(s.answered).toHaveLength(1);
  });
});
