/**
 * A paused seller holds no pool slot: with the pool the bottleneck (2 processes x
 * 2 jobs, an API at 100-150 ms, a rule no seller reaches), the other sellers'
 * rows/s while a big seller is paused are at least what they were before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, poolReady } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';

let stage: Stage;
const dir = mkdtempSync(join(tmpdir(), 'br-share-'));
const OTHERS = ['P1', 'P2', 'P3'];

async function othersRegistered(): Promise<number> {
  const s = await stage.stats();
  return OTHERS.reduce((n, id) => n + (s.sellers[id]?.registered ?? 0), 0);
}

async function rate(ms: number): Promise<number> {
  const a = await othersRegistered();
  const t = Date.now();
  await new Promise((r) => setTimeout(r, ms));
  return ((await othersRegistered()) - a) / ((Date.now() - t) / 1000);
}

beforeAll(async () => {
  stage = await startStage(
    { RATE_LIMIT_MAX: '1000', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '0', QUEUE_PREFIX: '{share}', WORKER_CONCURRENCY: '2' },
    { MOCK_LATENCY_MS: '100-150' },
  );
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('a paused seller holds no slot', () => {
  it("keeps the other sellers' rows/s while a big seller is paused", async () => {
    for (const [seller, rows] of [['BIGP', 500], ...OTHERS.map((s) => [s, 400] as const)] as const) {
      const file = join(dir, `${seller}.xlsx`);
      writeFileSync(file, await buildProductSheet(sampleProducts(seller, rows)));
      expect((await runCli(['upload', file, '--seller', seller], stage.env)).code).toBe(0);
    }
    const pool = stage.pool(2);
    await poolReady(pool, 2);
    await new Promise((r) => setTimeout(r, 2000));
    const before = await rate(4000);
    expect((await runCli(['pause', '--seller', 'BIGP'], stage.env)).code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    const bigBefore = (await stage.stats()).sellers.BIGP!.registered;
    const during = await rate(4000);
    expect((await stage.stats()).sellers.BIGP!.registered).toBe(bigBefore);
    expect(during / before).toBeGreaterThanOrEqual(0.9);
    console.log(`other sellers: ${before.toFixed(1)} rows/s before the pause, ${during.toFixed(1)} during it (x${(during / before).toFixed(2)})`);
    await runCli(['resume', '--seller', 'BIGP'], stage.env);
  }, 120_000);
});
