/**
 * A fresh pool against a marketplace that announces every seller's rule, for a
 * seller whose rule is below the configured one (marketplace stand-in, example
 * adapter, real worker processes, a private redis-server). With the adapter's
 * `announcesRules` the seller's first row goes alone and the rest follow under
 * the rule its answer brought: no 429. Without it the pool has seen no answer
 * yet, and the first window leaves under the configured rule: the control shows
 * the 429s the member prevents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, runCli, startCli, poolReady } from '../helpers/cli.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { MockMarketplace } from '../../src/mock-api/marketplace.js';
import { buildSheet, ENGLISH_HEADERS, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { until } from '../helpers/until.js';

const ROWS = 12;
const dir = mkdtempSync(join(tmpdir(), 'br-first-window-'));
const example = join(PACKAGE_ROOT, 'examples', 'marketplace-adapter.mjs');
const silentAdapter = join(dir, 'no-announces-rules.mjs');
writeFileSync(silentAdapter, `import base from ${JSON.stringify(example)};\nexport default { ...base, announcesRules: false };\n`);
const clients = { F1: { clientId: 'client-F1', clientSecret: 'sec-F1-2b3c4d5e6f' }, F2: { clientId: 'client-F2', clientSecret: 'sec-F2-7a8b9c0d1e' } };
const credentialsFile = join(dir, 'credentials.json');
writeFileSync(credentialsFile, JSON.stringify(clients));

let redis: TestRedis;
let market: MockMarketplace;
let apiUrl: string;

beforeAll(async () => {
  redis = await startRedis();
  // both sellers are allowed 4 a second, below the configured 20; answers take 100-150 ms, so a
  // first window sent before any answer is all in flight at once
  const rule = { max: 4, windowMs: 1000 };
  market = new MockMarketplace({ clients, rule: { max: 20, windowMs: 1000 }, sellerRules: { F1: rule, F2: rule }, latencyMs: { min: 100, max: 150 }, tokenLatencyMs: { min: 20, max: 40 } });
  apiUrl = `http://127.0.0.1:${await market.listen(0)}`;
}, 60_000);

afterAll(async () => {
  await market?.close();
  await redis?.stop();
});

/** A fresh pool (its own queue prefix) on `adapter`; the seller's one upload of ROWS rows, to the end. */
async function firstUpload(sellerId: string, adapter: string, prefix: string) {
  const env = baseEnv({
    REDIS_URL: redis.url, REGISTRATION_API_URL: apiUrl, QUEUE_PREFIX: prefix,
    RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', WORKER_CONCURRENCY: '8',
    REGISTRATION_ADAPTER: adapter, SELLER_CREDENTIALS_FILE: credentialsFile, SHUTDOWN_TIMEOUT_MS: '3000',
  });
  const pool = startCli(['workers', '--processes', '2'], env);
  try {
    await poolReady(pool, 2, 60_000);
    const file = join(dir, `${sellerId}.xlsx`);
    writeFileSync(file, await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts(sellerId, ROWS))));
    const up = await runCli(['upload', file, '--seller', sellerId, '--json'], env);
    expect(up.code, up.stderr).toBe(0);
    const { uploadId } = JSON.parse(up.stdout) as { uploadId: string };
    const done = async () => JSON.parse((await runCli(['status', '--upload', uploadId, '--json'], env)).stdout).uploads[0];
    await until(`${sellerId} done`, async () => (await done())?.done === true, 30_000);
    expect(await done()).toMatchObject({ registered: ROWS, failed: 0 });
  } finally {
    await pool.stop();
  }
  return market.stats().sellers[sellerId]!;
}

describe("a fresh pool, a seller's rule below the configured one", () => {
  it("with the adapter's announcesRules, learns the rule from the first answer before the rest go: no 429", async () => {
    const stats = await firstUpload('F1', example, '{fw-announced}');
    expect(stats).toMatchObject({ registered: ROWS, tooMany: 0 });
  }, 90_000);

  it('without it, sends the first window under the configured rule and meets 429s (the control)', async () => {
    const stats = await firstUpload('F2', silentAdapter, '{fw-silent}');
    expect(stats.registered).toBe(ROWS);
    expect(stats.tooMany).toBeGreaterThan(0);
    console.log(`[first window] 429s without announcesRules: ${stats.tooMany}`);
  }, 90_000);
});
