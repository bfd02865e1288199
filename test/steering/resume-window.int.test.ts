/**
 * A seller resumed after its rows came due sends its next window at once. When
 * a resume promotes the held rows, a process that has not read the resume yet
 * takes some of them, with the permits asked ahead for them, and holds them
 * again: those permits were given back unused. They must hold no place in the
 * seller's window (lua/complete-send.lua, ARGV[14]); each took one for a whole
 * W + G before, and the seller's next window then went one window late.
 * Timing: several sellers in each of two rounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type Running } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { until } from '../helpers/until.js';

const LIMIT = 10;
const WINDOW_MS = 4000;
const GUARD_MS = 100;
const SELLERS = 3;

let stage: Stage;
let pool: Running;
const dir = mkdtempSync(join(tmpdir(), 'br-resume-window-'));
const arrivals = async (seller: string) => ((await stage.stats()).sellers[seller]?.times ?? []) as number[];

beforeAll(async () => {
  stage = await startStage(
    { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW_MS), RATE_LIMIT_GUARD_MS: String(GUARD_MS), QUEUE_PREFIX: '{resume-window}' },
    { MOCK_LATENCY_MS: '20-80' },
  );
  pool = stage.pool(4);
  await pool.waitFor(/worker process ready/);
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('resume', () => {
  it("sends a resumed seller's next window at once, not one window later, every time", async () => {
    // from the resume's start to the last call of the seller's next window: the resumes (three
    // at once) and the processes' reading of them took 1.3-2.5 s here; a window lost to permits
    // given back puts it W + G later (5.4-5.8 s for 2 and 3 of 6 sellers in two runs without the fix)
    const lastOfWindow: number[] = [];
    for (let round = 0; round < 2; round++) {
      const sellers = Array.from({ length: SELLERS }, (_, i) => `R${round}S${i}`);
      await Promise.all(sellers.map(async (seller) => {
        const file = join(dir, `${seller}.xlsx`);
        writeFileSync(file, await buildProductSheet(sampleProducts(seller, 2 * LIMIT)));
        expect((await runCli(['upload', file, '--seller', seller, '--json'], stage.env)).code).toBe(0);
      }));
      for (const seller of sellers) await until(`${seller}'s first window`, async () => (await arrivals(seller)).length >= LIMIT, 30_000);
      await Promise.all(sellers.map(async (seller) => expect((await runCli(['pause', '--seller', seller], stage.env)).code).toBe(0)));
      // the first windows free while the sellers are paused: their next rows come due and are held
      await new Promise((r) => setTimeout(r, WINDOW_MS + GUARD_MS + 1000));
      for (const seller of sellers) expect(await arrivals(seller)).toHaveLength(LIMIT);
      const resumedAt = Date.now();
      await Promise.all(sellers.map(async (seller) => expect((await runCli(['resume', '--seller', seller], stage.env)).code).toBe(0)));
      for (const seller of sellers) {
        await until(`${seller}'s next window`, async () => (await arrivals(seller)).length >= 2 * LIMIT, 30_000);
        const times = [...(await arrivals(seller))].sort((a, b) => a - b);
        lastOfWindow.push(times[2 * LIMIT - 1]! - resumedAt);
      }
    }
    console.log(`[resume] ms from a resume's start to the last call of the seller's next window: ${lastOfWindow.join(', ')}`);
    expect(lastOfWindow.filter((ms) => ms > WINDOW_MS + GUARD_MS)).toEqual([]);
    const done = JSON.parse((await runCli(['status', '--wait', '--json'], stage.env, 60_000)).stdout);
    for (const upload of done.uploads) expect(upload).toMatchObject({ registered: 2 * LIMIT, failed: 0, pending: 0 });
    expect((await stage.stats()).totals).toMatchObject({ registered: 2 * SELLERS * 2 * LIMIT, tooMany: 0 });
  }, 180_000);
});
