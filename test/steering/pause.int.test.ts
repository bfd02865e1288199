/**
 * pause/resume with real worker processes against the mock API: once `pause`
 * returns, no call for the seller arrives at the API more than 200 ms later (3
 * rounds: this is timing), other sellers keep flowing, the rows stay pending with
 * no attempt used, the pause outlives a restart of the pool, and after resume
 * every row is registered once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type Running } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { until } from '../helpers/until.js';

let stage: Stage;
let pool: Running;
const dir = mkdtempSync(join(tmpdir(), 'br-pause-'));
/** The most a call for a paused seller may arrive after `pause` returned (cli.md). */
const GRACE_MS = 200;
/**
 * The paused seller's rows (20 a window of 1.1 s: its 3 rounds of pause and resume take
 * about 100 of them) and the other seller's, which keeps flowing through rounds 0 and 2.
 */
const BIG_ROWS = 300;
const OTHER_ROWS = 300;

type Api = Awaited<ReturnType<Stage['stats']>>;
const arrivals = (s: Api, seller: string) => (s.sellers[seller]?.times ?? []) as number[];


async function uploadOf(seller: string, count: number): Promise<string> {
  const file = join(dir, `${seller}.xlsx`);
  writeFileSync(file, await buildProductSheet(sampleProducts(seller, count)));
  const res = await runCli(['upload', file, '--seller', seller, '--json'], stage.env);
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout).uploadId;
}

beforeAll(async () => {
  stage = await startStage(
    { RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', QUEUE_PREFIX: '{pause}' },
    { MOCK_LATENCY_MS: '20-80' },
  );
  pool = stage.pool(4);
  await pool.waitFor(/worker process ready/);
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('pause and resume', () => {
  it('stops a seller\'s calls within 200 ms of pause returning, every time, while the others flow, and fails no row', async () => {
    const [big, other] = await Promise.all([uploadOf('BIG', BIG_ROWS), uploadOf('OTHER', OTHER_ROWS)]);
    const late: number[] = [];
    for (let round = 0; round < 3; round++) {
      const before = arrivals(await stage.stats(), 'BIG').length;
      await until('BIG flowing', async () => arrivals(await stage.stats(), 'BIG').length >= before + 15, 30_000);
      const paused = await runCli(['pause', '--seller', 'BIG', '--reason', `maintenance ${round}`], stage.env);
      const returnedAt = Date.now();
      expect(paused.code).toBe(0);
      expect(paused.stdout).toMatch(/seller BIG paused: maintenance/);
      const otherBefore = arrivals(await stage.stats(), 'OTHER').length;
      await new Promise((r) => setTimeout(r, 1200));
      const s = await stage.stats();
      late.push(arrivals(s, 'BIG').filter((t) => t > returnedAt + GRACE_MS).length);
      const status = JSON.parse((await runCli(['status', '--json'], stage.env)).stdout);
      const seller = status.sellers.find((x: { sellerId: string }) => x.sellerId === 'BIG');
      expect(seller.paused).toMatchObject({ reason: `maintenance ${round}`, by: 'operator' });
      // the pool's processes, as the console's operator page shows them
      if (round === 0) expect(status.pool).toMatchObject({ expected: 4 });
      expect(status.uploads.find((u: { uploadId: string }) => u.uploadId === big)).toMatchObject({ state: 'paused', failed: 0, done: false });
      if (round === 1) {
        // the pause outlives the pool
        await pool.stop('SIGTERM');
        pool = stage.pool(4);
        await pool.waitFor(/worker process ready/);
        await new Promise((r) => setTimeout(r, 1000));
        expect(arrivals(await stage.stats(), 'BIG').filter((t) => t > returnedAt + GRACE_MS)).toEqual([]);
      } else if (arrivals(await stage.stats(), 'OTHER').length < OTHER_ROWS) {
        expect(arrivals(await stage.stats(), 'OTHER').length).toBeGreaterThan(otherBefore);
      }
      const resumed = await runCli(['resume', '--seller', 'BIG'], stage.env);
      expect(resumed.stdout).toMatch(/seller BIG resumed \(was paused by operator: maintenance/);
    }
    expect(late).toEqual([0, 0, 0]);
    const done = await runCli(['status', '--wait', '--json'], stage.env, 120_000);
    const end = JSON.parse(done.stdout);
    expect(end.uploads.find((u: { uploadId: string }) => u.uploadId === big)).toMatchObject({ registered: BIG_ROWS, failed: 0, pending: 0 });
    expect(end.uploads.find((u: { uploadId: string }) => u.uploadId === other)).toMatchObject({ registered: OTHER_ROWS, failed: 0, pending: 0 });
    const api = await stage.stats();
    expect(api.sellers.BIG).toMatchObject({ registered: BIG_ROWS, tooMany: 0 });
    expect(api.sellers.OTHER).toMatchObject({ registered: OTHER_ROWS, tooMany: 0 });
  }, 240_000);

  it('pause --all holds every seller until resume --all', async () => {
    await uploadOf('A1', 200);
    const before = await stage.stats();
    const paused = await runCli(['pause', '--all'], stage.env);
    const returnedAt = Date.now();
    expect(paused.stdout).toMatch(/every seller paused/);
    await new Promise((r) => setTimeout(r, 1000));
    const during = await stage.stats();
    expect(arrivals(during, 'A1').filter((t) => t > returnedAt + GRACE_MS)).toEqual([]);
    expect(arrivals(during, 'A1').length).toBeLessThan(200);
    expect(before.sellers.A1?.registered ?? 0).toBeLessThan(200);
    expect((await runCli(['resume', '--all'], stage.env)).code).toBe(0);
    const done = await runCli(['status', '--wait', '--seller', 'A1', '--json'], stage.env, 60_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ registered: 200, failed: 0 });
  }, 120_000);

  it('while every seller is paused, resuming one lets it go on and keeps the others paused; a new pause --all holds it again', async () => {
    const paused = await runCli(['pause', '--all', '--reason', 'maintenance'], stage.env);
    expect(paused.code).toBe(0);
    await uploadOf('E1', 20);
    await uploadOf('E2', 20);
    const resumed = await runCli(['resume', '--seller', 'E1'], stage.env);
    expect(resumed.stdout).toBe('seller E1 resumed; every other seller stays paused (by operator: maintenance) until `bulk-register resume --all`.\n');
    const done = await runCli(['status', '--wait', '--seller', 'E1', '--json'], stage.env, 60_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ registered: 20, failed: 0 });
    const view = JSON.parse((await runCli(['status', '--json'], stage.env)).stdout) as { sellers: Array<{ sellerId: string; paused: unknown }>; uploads: Array<{ sellerId: string; state: string; registered: number }> };
    expect(view.sellers.find((x) => x.sellerId === 'E1')?.paused).toBeNull();
    expect(view.sellers.find((x) => x.sellerId === 'E2')?.paused).toMatchObject({ reason: 'maintenance', by: 'operator' });
    expect(view.uploads.find((u) => u.sellerId === 'E2')).toMatchObject({ state: 'paused', registered: 0 });
    expect((await stage.stats()).sellers.E2?.registered ?? 0).toBe(0);
    // a new pause of everyone holds the one resumed before too
    await runCli(['pause', '--all', '--reason', 'again'], stage.env);
    const again = JSON.parse((await runCli(['status', '--seller', 'E1', '--json'], stage.env)).stdout) as { sellers: Array<{ paused: unknown }> };
    expect(again.sellers[0]?.paused).toMatchObject({ reason: 'again' });
    expect((await runCli(['resume', '--all'], stage.env)).code).toBe(0);
    const e2 = await runCli(['status', '--wait', '--seller', 'E2', '--json'], stage.env, 60_000);
    expect(JSON.parse(e2.stdout).uploads[0]).toMatchObject({ registered: 20, failed: 0 });
  }, 120_000);

  it('shows a seller paused before its first upload, with why and by whom', async () => {
    await runCli(['pause', '--seller', 'NEW1', '--reason', 'kyc pending'], stage.env);
    const view = JSON.parse((await runCli(['status', '--json'], stage.env)).stdout) as { sellers: Array<{ sellerId: string; paused: unknown }> };
    expect(view.sellers.find((x) => x.sellerId === 'NEW1')?.paused).toMatchObject({ reason: 'kyc pending', by: 'operator' });
    expect((await runCli(['status', '--seller', 'NEW1'], stage.env)).stdout).toContain('kyc pending');
    await runCli(['resume', '--seller', 'NEW1'], stage.env);
    const after = JSON.parse((await runCli(['status', '--json'], stage.env)).stdout) as { sellers: Array<{ sellerId: string }> };
    expect(after.sellers.some((x) => x.sellerId === 'NEW1')).toBe(false);
  }, 60_000);

  it('says what is wrong with a usage mistake, in one sentence', async () => {
    const neither = await runCli(['pause'], stage.env);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toBe('error: give --seller <id> or --all\n');
    const bad = await runCli(['resume', '--seller', 'no/such'], stage.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/seller "no\/such" is invalid/);
    // a flag of one value given twice is refused, not settled by the last one (pause, status, upload alike)
    for (const args of [['pause', '--seller', 'A1', '--seller', 'B1'], ['status', '--seller', 'A1', '--seller', 'B1'], ['upload', 'x.xlsx', '--seller', 'A1', '--seller', 'B1']]) {
      const twice = await runCli(args, stage.env);
      expect(twice.code).toBe(2);
      expect(twice.stderr).toContain('--seller was given twice ("A1", then "B1"): give it once.');
    }
    expect(JSON.parse((await runCli(['status', '--json'], stage.env)).stdout).sellers.some((x: { sellerId: string; paused: unknown }) => x.sellerId === 'A1' && x.paused)).toBe(false);
  });
});
