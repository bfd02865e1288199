/**
 * An API outage with real worker processes: every call answered 503 for a while,
 * then refused connections. The pool stops sending and probes about once a
 * second, no row uses its attempts on the outage (MAX_ATTEMPTS 5 with backoff
 * would give up within ~15 s of 1, 2, 4, 8 s waits: the outage is longer), and once the API answers the rows go on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, runCli, startCli, type Running } from '../helpers/cli.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { MockRegistrationApi } from '../../src/mock-api/server.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { until } from '../helpers/until.js';

let redis: TestRedis;
let api: MockRegistrationApi;
let port: number;
let env: NodeJS.ProcessEnv;
let pool: Running;
const dir = mkdtempSync(join(tmpdir(), 'br-outage-'));
/** How long the 503s and then the refused connections last (OUTAGE_503_MS / OUTAGE_REFUSED_MS for a longer trial by hand). */
const OUTAGE_MS = Number(process.env.OUTAGE_503_MS ?? 15_000);
const REFUSED_MS = Number(process.env.OUTAGE_REFUSED_MS ?? 6000);

const registered = () => Object.values(api.statsSnapshot().sellers).reduce((n, s) => n + s.registered, 0);


beforeAll(async () => {
  redis = await startRedis();
  api = new MockRegistrationApi({ limit: 50, windowMs: 1000, latencyMs: { min: 20, max: 60 } });
  port = await api.listen(0);
  env = baseEnv({
    REDIS_URL: redis.url, REGISTRATION_API_URL: `http://127.0.0.1:${port}`, QUEUE_PREFIX: '{outage}',
    RATE_LIMIT_MAX: '50', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', API_TIMEOUT_MS: '2000', METRICS_PORT: '0',
  });
  pool = startCli(['workers', '--processes', '8'], env);
  // the uploads go while the pool starts (which takes 8-9 s of this 2-core machine)
  const uploads = ['O1', 'O2', 'O3'].map(async (seller) => {
    const file = join(dir, `${seller}.xlsx`);
    writeFileSync(file, await buildProductSheet(sampleProducts(seller, 400)));
    return (await runCli(['upload', file, '--seller', seller], env)).code;
  });
  await pool.waitFor(/worker process ready/);
  expect(await Promise.all(uploads)).toEqual([0, 0, 0]);
}, 90_000);

afterAll(async () => {
  await pool?.stop('SIGKILL');
  await api?.close();
  await redis?.stop();
});

describe('an API outage', () => {
  it(`holds every row through ${OUTAGE_MS / 1000} s of 503s and ${REFUSED_MS / 1000} s of refused connections, probes every 2 s, and fails no row`, async () => {
    await until('rows flowing', () => registered() >= 150);
    // 503s
    api.setOutage(true);
    const downAt = Date.now();
    await until('the pool says the API is unavailable', async () => JSON.parse((await runCli(['status', '--json'], env)).stdout).api?.available === false, 10_000);
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - downAt))));
    const during503 = api.outageCalls.length;
    const inFirst30s = api.outageCalls.filter((t) => t - downAt <= 30_000).length;
    // then refused connections
    await api.close();
    await new Promise((r) => setTimeout(r, REFUSED_MS));
    api.setOutage(false);
    await api.listen(port);
    const backAt = Date.now();
    const before = registered();
    await until('first registration after the outage', () => registered() > before, 10_000);
    const firstCallAfterMs = Date.now() - backAt;
    const done = await runCli(['status', '--wait', '--json'], env, 180_000);
    const end = JSON.parse(done.stdout);
    for (const u of end.uploads) expect(u).toMatchObject({ total: 400, registered: 400, failed: 0, pending: 0 });
    // available again since the probe that ended the outage (ms since the epoch)
    expect(end.api).toEqual({ available: true, since: expect.any(Number) });
    expect(end.api.since).toBeGreaterThanOrEqual(backAt - 1000);
    expect(end.api.since).toBeLessThanOrEqual(Date.now());
    const stats = api.statsSnapshot();
    expect(stats.totals.tooMany).toBe(0);
    // the 503s: the calls in flight when it began, then about one probe every 2 s
    expect(inFirst30s).toBeLessThanOrEqual(60);
    expect(firstCallAfterMs).toBeLessThanOrEqual(5000);
    expect(pool.output()).toMatch(/"msg":"the registration API is unavailable: the pool holds its rows/);
    expect(pool.output()).toMatch(/"msg":"the registration API answers again/);
    const opened = pool.output().split("the registration API is unavailable: the pool holds").length - 1;
    const closed = pool.output().split("the registration API answers again").length - 1;
    // each start and each end once, whatever the number of processes
    expect(closed).toBe(opened);
    expect(pool.output()).not.toMatch(/available again/);
    console.log(`outage: ${during503} calls during ${OUTAGE_MS} ms of 503s (${inFirst30s} in its first 30 s); first registration ${firstCallAfterMs} ms after the API was back; breaker opened ${opened}, closed ${closed} times`);
  }, 240_000 + OUTAGE_MS + REFUSED_MS);
});
