/**
 * The throttle under stress, with real processes: API latency from 1 to 300 ms
 * with a worker paused (SIGSTOP) in the middle of its sends; and worker
 * processes whose clocks run 10 s ahead or behind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../../src/paths.js';
import { runCli, poolReady } from '../helpers/cli.js';
import { minApiGap, startStage, workerPids, type Stage } from '../helpers/pipeline.js';

const LIMIT = 10;
const WINDOW = 1000;
let stage: Stage | undefined;
afterEach(async () => { await stage?.stop(); stage = undefined; });

describe('the throttle under stress', () => {
  it('sees zero 429s with 1-300 ms latency and a worker stopped mid-send for longer than the window', async () => {
    stage = await startStage(
      { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW), RATE_LIMIT_GUARD_MS: '50', QUEUE_PREFIX: '{stall}' },
      { MOCK_LATENCY_MS: '1-300' },
    );
    const pool = stage.pool(4, { WORKER_CONCURRENCY: '2' });
    await poolReady(pool, 4);
    const up = await runCli(['upload', join(FIXTURES_DIR, 'seller-b-60-korean.xlsx'), '--seller', 'STALL', '--json'], stage.env);
    expect(up.code).toBe(0);
    // wait until sends are flowing, then freeze one worker for 2.5 s (> W + G), in the middle of its requests
    await pool.waitFor(/"msg":"upload progress"/);
    const [victim] = workerPids(pool.output());
    process.kill(victim!, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 2500));
    process.kill(victim!, 'SIGCONT');

    const done = await runCli(['status', '--seller', 'STALL', '--wait', '--json'], stage.env, 120_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ total: 60, pending: 0, done: true });
    const stats = await stage.stats();
    expect(stats.sellers.STALL).toMatchObject({ tooMany: 0, registered: 60 });
    expect(stats.sellers.STALL!.maxInWindow).toBeLessThanOrEqual(LIMIT);
    expect(minApiGap(stats.sellers.STALL!.times!, LIMIT)).toBeGreaterThanOrEqual(WINDOW);
  });

  it('makes the same decisions with worker clocks 10 s ahead and behind, and never sends before a permit', async () => {
    stage = await startStage({ RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW), RATE_LIMIT_GUARD_MS: '50', QUEUE_PREFIX: '{skew}', LOG_LEVEL: 'debug' }, { MOCK_LATENCY_MS: '2-25' });
    const ahead = stage.pool(2, { CLOCK_OFFSET_MS: '10000' });
    const behind = stage.pool(2, { CLOCK_OFFSET_MS: '-10000' });
    const exact = stage.pool(2);
    for (const p of [ahead, behind, exact]) await poolReady(p, 2);
    const up = await runCli(['upload', join(FIXTURES_DIR, 'seller-b-60-korean.xlsx'), '--seller', 'SKEW', '--json'], stage.env);
    expect(up.code).toBe(0);
    const done = await runCli(['status', '--seller', 'SKEW', '--wait', '--json'], stage.env, 120_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ total: 60, pending: 0, done: true });

    const stats = await stage.stats();
    expect(stats.sellers.SKEW).toMatchObject({ tooMany: 0, registered: 60, requests: 60 });
    expect(minApiGap(stats.sellers.SKEW!.times!, LIMIT)).toBeGreaterThanOrEqual(WINDOW);
    // Jobs delayed by a host whose clock is behind are promoted early by the others
    // (and a host ahead promotes everyone's early); the limiter sends them back to
    // sleep for the time that remains, measured on Redis's clock, instead of sending.
    const redelays = [ahead, behind, exact].map((p) => p.output()).join('\n').split('\n').filter((l) => l.includes('no permit yet')).map((l) => JSON.parse(l) as { waitMs: number; row: number });
    const rows = new Map<number, number>();
    for (const r of redelays) rows.set(r.row, (rows.get(r.row) ?? 0) + 1);
    expect([...rows.values()].some((n) => n >= 2)).toBe(true);
  });
});
