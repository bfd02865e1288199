/**
 * Nothing lost, nothing twice: each fault with real processes against a real
 * Redis. Figures (rows registered against expected, duplicates, 429s, time to
 * recover) are printed for the record.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { freePort, startRedis, type TestRedis } from '../helpers/redis-server.js';
import { baseEnv, runCli, startCli, type Running, poolReady } from '../helpers/cli.js';
import { alive, startStage, workerPids, type Stage } from '../helpers/pipeline.js';

let stage: Stage | undefined;
const extra: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await stage?.stop();
  stage = undefined;
  for (const f of extra.splice(0)) await f();
});

const dir = mkdtempSync(join(tmpdir(), 'br-faults-'));
async function sheet(prefix: string, rows: number): Promise<string> {
  const path = join(dir, `${prefix}.xlsx`);
  writeFileSync(path, await buildProductSheet(sampleProducts(prefix, rows)));
  return path;
}

async function upload(prefix: string, rows: number, seller: string): Promise<string> {
  const r = await runCli(['upload', await sheet(prefix, rows), '--seller', seller, '--json'], stage!.env);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).uploadId;
}

async function waitDone(uploadId: string, timeoutMs = 90_000) {
  const r = await runCli(['status', '--upload', uploadId, '--wait', '--json'], stage!.env, timeoutMs);
  return JSON.parse(r.stdout).uploads[0];
}

const record = (what: string, figures: object) => process.stdout.write(`[fault] ${what}: ${JSON.stringify(figures)}\n`);

describe('faults', () => {
  it('a worker SIGKILLed mid-request is replaced; its row runs again with the same key and is registered once', async () => {
    stage = await startStage(
      { RATE_LIMIT_MAX: '50', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '0', QUEUE_PREFIX: '{kill}', LOCK_DURATION_MS: '2000' },
      { MOCK_LATENCY_MS: '1500-2000' },
    );
    const pool = stage.pool(2);
    await poolReady(pool, 2);
    const id = await upload('K', 6, 'KILL');
    await new Promise((r) => setTimeout(r, 700)); // both workers are waiting for an answer now
    const [victim] = workerPids(pool.output());
    const killedAt = Date.now();
    process.kill(victim!, 'SIGKILL');
    await pool.waitFor(/worker process died; restarting it/);
    const final = await waitDone(id);
    const recoveredMs = Date.now() - killedAt;
    const stats = await stage.stats();
    expect(final).toMatchObject({ total: 6, registered: 6, failed: 0 });
    expect(stats.sellers.KILL).toMatchObject({ registered: 6, tooMany: 0 });
    expect(stats.sellers.KILL!.replays).toBeGreaterThanOrEqual(1); // the killed row came back as a replay, not a second product
    expect(workerPids(pool.output()).length).toBe(3); // two originals and the replacement
    record('worker SIGKILL', { registered: final.registered, expected: 6, products: stats.sellers.KILL!.registered, replays: stats.sellers.KILL!.replays, tooMany: 0, recoveredMs });
  });

  it('when the supervisor is SIGKILLed its worker processes notice and exit within seconds', async () => {
    stage = await startStage({ QUEUE_PREFIX: '{orphan}' }, { MOCK_LATENCY_MS: '300' });
    const pool = stage.pool(2);
    await poolReady(pool, 2);
    await upload('O', 10, 'ORPHAN');
    await pool.waitFor(/upload progress/);
    const pids = workerPids(pool.output());
    const killedAt = Date.now();
    pool.child.kill('SIGKILL');
    while (pids.some(alive) && Date.now() - killedAt < 10_000) await new Promise((r) => setTimeout(r, 100));
    expect(pids.filter(alive)).toEqual([]);
    record('supervisor SIGKILL', { workersGoneAfterMs: Date.now() - killedAt });
  });

  it('retries 503s, timeouts and dropped connections with the same key: one product per row', async () => {
    stage = await startStage(
      { QUEUE_PREFIX: '{transit}', API_TIMEOUT_MS: '400', MAX_ATTEMPTS: '10', RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '1000' },
      { MOCK_FAIL_RATE: '0.25', MOCK_DROP_RATE: '0.15', MOCK_HANG_RATE: '0.1', MOCK_LATENCY_MS: '2-20' },
    );
    stage.pool(4);
    const started = Date.now();
    const id = await upload('T', 30, 'TRANSIT');
    const final = await waitDone(id, 120_000);
    const stats = await stage.stats();
    expect(final).toMatchObject({ total: 30, registered: 30, failed: 0, pending: 0 });
    expect(stats.sellers.TRANSIT).toMatchObject({ registered: 30, tooMany: 0 });
    expect(stats.sellers.TRANSIT!.failures).toBeGreaterThan(0);
    expect(stats.sellers.TRANSIT!.replays).toBeGreaterThan(0); // lost responses came back as 200 replays
    record('API transit failures', { registered: final.registered, expected: 30, products: stats.sellers.TRANSIT!.registered, injected: stats.sellers.TRANSIT!.failures, replays: stats.sellers.TRANSIT!.replays, tooMany: 0, ms: Date.now() - started });
  });

  it('fails a row with the reason when its attempts run out, and counts it', async () => {
    // the API keeps failing these rows (their category) while it answers the others: not an
    // outage (that holds every row, test/steering/outage.int.test.ts), a row that cannot go
    stage = await startStage(
      { QUEUE_PREFIX: '{giveup}', MAX_ATTEMPTS: '2', RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '0' },
      { MOCK_FAIL_CATEGORIES: 'C0999', MOCK_LATENCY_MS: '5-20' },
    );
    stage.pool(2);
    const others = await upload('H', 60, 'HEALTHY');
    const file = join(dir, 'giveup.xlsx');
    writeFileSync(file, await buildProductSheet(sampleProducts('G', 3).map((p) => ({ ...p, category: 'C0999' }))));
    const r = await runCli(['upload', file, '--seller', 'GIVEUP', '--json'], stage!.env);
    const id = JSON.parse(r.stdout).uploadId;
    const final = await waitDone(id);
    expect(final).toMatchObject({ total: 3, registered: 0, failed: 3, pending: 0, done: true });
    expect(await waitDone(others)).toMatchObject({ total: 60, registered: 60, failed: 0 });
    const rows = await stage.redis.client().hgetall(`giveup:up:{GIVEUP}:${id}:rows`);
    expect(Object.values(rows).map((v) => JSON.parse(v).reason)).toEqual(Array(3).fill('gave up after 2 attempts: the API answered 503: service unavailable (injected)'));
  });

  it('after a 429 it honours Retry-After for all the seller\'s rows, without using attempts', async () => {
    stage = await startStage({ QUEUE_PREFIX: '{outside}', RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '4000', RATE_LIMIT_GUARD_MS: '0', MAX_ATTEMPTS: '1' });
    const pool = stage.pool(1);
    await pool.waitFor(/worker process ready/);
    // someone outside the pool used the seller's whole quota a moment ago
    for (let i = 0; i < 5; i++) {
      await fetch(`${stage.apiUrl}/sellers/OUT/products`, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `outside:${i}` },
        body: JSON.stringify({ sku: `X-${i}`, name: 'x', price: 1, stock: 1, category: 'C1' }),
      });
    }
    const id = await upload('Q', 8, 'OUT');
    const final = await waitDone(id);
    const stats = await stage.stats();
    expect(final).toMatchObject({ total: 8, registered: 8, failed: 0 }); // MAX_ATTEMPTS 1: a 429 used no attempt
    expect(stats.sellers.OUT!.tooMany).toBe(1); // the other rows waited instead of meeting a 429 each
    const t = stats.sellers.OUT!.times!.sort((a, b) => a - b);
    expect(t[5]! - t[0]!).toBeGreaterThanOrEqual(4000 - 5); // nothing of ours until the outside sends left the window
    // the warning names the rule the row left under, for an operator to compare with the marketplace's
    expect(pool.output()).toMatch(/"sellerId":"OUT"[^\n]*"rule":\{"max":5,"windowMs":4000\}[^\n]*"msg":"the marketplace answered throttled/);
    record('429 from outside', { registered: final.registered, expected: 8, tooMany: stats.sellers.OUT!.tooMany });
  });

  it('carries on after Redis restarts (AOF) under a running pool, with nothing lost', async () => {
    stage = await startStage({ QUEUE_PREFIX: '{restart}', RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '50' }, { MOCK_LATENCY_MS: '2-20' }, ['--appendonly', 'yes']);
    const pool = stage.pool(3);
    await poolReady(pool, 3);
    const id = await upload('R', 40, 'RESTART');
    await new Promise((r) => setTimeout(r, 1200));
    const restartAt = Date.now();
    await stage.redis.restart();
    const final = await waitDone(id);
    const stats = await stage.stats();
    expect(final).toMatchObject({ total: 40, registered: 40, failed: 0, pending: 0 });
    expect(stats.sellers.RESTART).toMatchObject({ registered: 40, tooMany: 0 });
    record('Redis restart', { registered: final.registered, expected: 40, products: stats.sellers.RESTART!.registered, tooMany: 0, finishedAfterRestartMs: Date.now() - restartAt });
  });

  it('upload with Redis down exits 1 with one sentence and no password; workers wait for Redis and then work', async () => {
    const port = await freePort();
    const env = baseEnv({ REDIS_URL: `redis://:s3cret-pw@127.0.0.1:${port}`, QUEUE_PREFIX: '{down}' });
    const up = await runCli(['upload', await sheet('D', 3), '--seller', 'DOWN'], env);
    expect(up.code).toBe(1);
    expect(up.stderr.trim().split('\n')).toHaveLength(1);
    expect(up.stderr).toMatch(/^Cannot reach Redis at redis:\/\/\*\*\*@127\.0\.0\.1:\d+ \(connect ECONNREFUSED.*\): start Redis or set REDIS_URL/);
    expect(up.stderr).not.toContain('s3cret-pw');
    expect(up.stderr).not.toMatch(/\n\s+at /);

    const pool: Running = startCli(['workers', '--processes', '1'], env);
    extra.push(() => pool.stop('SIGKILL'));
    await pool.waitFor(/waiting for Redis at redis:\/\/\*\*\*@127\.0\.0\.1/);
    const redis: TestRedis = await startRedis(['--requirepass', 's3cret-pw'], { port });
    extra.push(() => redis.stop());
    await pool.waitFor(/worker process ready/, 20_000);
    expect(pool.output()).not.toContain('s3cret-pw');
    expect(await pool.stop('SIGTERM')).toBe(0);
  });
});
