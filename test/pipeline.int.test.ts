/**
 * The whole pipeline with real processes: `upload` -> a pool of worker processes
 * -> the mock API, on a private redis-server, under a short rule (20 per 2 s).
 * The window is 2 s: the log calls a seller throttled at the grant that fills its window
 * when its next place frees more than a quarter of a window (plus guard) later, and 4 cold
 * processes have taken 400-500 ms to fill 20 rows (at half a window, a slow run at 1 s
 * logged none).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runCli, type Running } from './helpers/cli.js';
import { alive, startStage, workerPids, type Stage } from './helpers/pipeline.js';
import { FIXTURES_DIR } from '../src/paths.js';

let stage: Stage;
let env: NodeJS.ProcessEnv;

const LIMIT = 20;
const WINDOW = 2000;

async function apiStats(): Promise<{ totals: Record<string, number>; sellers: Record<string, Record<string, number>> }> {
  return (await fetch(`${stage.apiUrl}/_stats`)).json() as never;
}

beforeAll(async () => {
  stage = await startStage(
    { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW), RATE_LIMIT_GUARD_MS: '100', QUEUE_PREFIX: '{pipeline}' },
    { MOCK_LATENCY_MS: '2-25', MOCK_INVALID_CATEGORIES: 'C0139' },
  );
  env = stage.env;
});

// a case whose assertion failed before its own stop leaves no pool working the next
afterEach(async () => {
  await stage?.stopPools();
}, 30_000);

afterAll(async () => {
  await stage?.stop();
});

describe('upload -> worker processes -> registration API', () => {
  it('registers every valid row exactly once with zero 429s, reports invalid rows, and ignores a re-upload', async () => {
    const a = await runCli(['upload', join(FIXTURES_DIR, 'seller-a-150.xlsx'), '--seller', 'S1', '--json'], env);
    expect(a.code).toBe(0);
    const aJson = JSON.parse(a.stdout);
    expect(aJson).toMatchObject({ sellerId: 'S1', rows: 150, enqueued: 150, alreadyUploaded: false, errors: [] });

    const bad = await runCli(['upload', join(FIXTURES_DIR, 'with-errors.xlsx'), '--seller', 'S2', '--json'], env);
    expect(bad.code).toBe(3);
    const badJson = JSON.parse(bad.stdout);
    expect(badJson.enqueued).toBe(6);
    expect(badJson.errors.map((e: { row: number }) => e.row)).toEqual([4, 6, 8, 9]);

    const pool: Running = stage.pool(4);
    const c = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S3'], env);
    expect(c.code).toBe(0);

    const done = await runCli(['status', '--wait', '--json'], env, 120_000);
    expect(done.code).toBe(0);
    const status = JSON.parse(done.stdout);
    const byId = Object.fromEntries(status.uploads.map((u: { sellerId: string }) => [u.sellerId, u]));
    // Every 40th fixture product has category C0139, which this API does not know (422):
    // those rows fail with the API's reason, never retried.
    expect(byId.S1).toMatchObject({ total: 150, registered: 147, duplicate: 0, failed: 3, pending: 0, done: true });
    expect(byId.S3).toMatchObject({ total: 7, registered: 7, pending: 0, done: true });
    expect(byId.S2).toMatchObject({ total: 6, registered: 6, pending: 0, done: true });
    const rows = await stage.redis.client().hgetall(`pipeline:up:{S1}:${aJson.uploadId}:rows`);
    const failed = Object.entries(rows).filter(([, v]) => JSON.parse(v).status === 'failed');
    expect(failed.map(([row]) => Number(row)).sort((x, y) => x - y)).toEqual([41, 81, 121]);
    expect(JSON.parse(failed[0]![1]).reason).toBe('category C0139 does not exist');

    const stats = await apiStats();
    expect(stats.totals.tooMany).toBe(0);
    expect(stats.sellers.S1).toMatchObject({ registered: 147, invalid: 3, replays: 0, tooMany: 0 });
    expect(stats.sellers.S1!.requests).toBe(150);
    expect(stats.sellers.S1!.maxInWindow).toBeLessThanOrEqual(LIMIT);
    expect(stats.sellers.S3).toMatchObject({ registered: 7, requests: 7 });

    const again = await runCli(['upload', join(FIXTURES_DIR, 'seller-a-150.xlsx'), '--seller', 'S1', '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ uploadId: aJson.uploadId, enqueued: 0, alreadyUploaded: true });

    await pool.waitFor(/"msg":"upload finished".*"uploadId":"[0-9a-f]+".*|"uploadId":"[0-9a-f]+".*"msg":"upload finished"/);
    const out = pool.output();
    const finished = out.split('\n').filter((l) => l.includes('"msg":"upload finished"'));
    expect(finished.filter((l) => l.includes(aJson.uploadId))).toHaveLength(1);
    expect(finished.filter((l) => l.includes('"sellerId":"S3"'))).toHaveLength(1);
    const progress = out.split('\n').filter((l) => l.includes('"msg":"upload progress"') && l.includes(aJson.uploadId)).map((l) => JSON.parse(l));
    const percents = progress.filter((p) => !p.event).map((p) => p.percent);
    for (const step of [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) expect(percents).toContain(step);
    expect(progress.some((p) => p.event === 'throttled' && p.nextPermitInMs > 0)).toBe(true);
    // S1's 150 rows at 20 a window are 8 windows: throttled when one fills, released when the next opens
    const events = progress.filter((p) => p.event).sort((x, y) => x.time - y.time).map((p) => p.event);
    expect(events.filter((e) => e === 'released').length, events.join(' ')).toBeGreaterThanOrEqual(5);
    expect(events.every((e, i) => i === 0 || e !== events[i - 1]), events.join(' ')).toBe(true);
    expect(progress.every((p) => typeof p.etaMs === 'number')).toBe(true);
    // 150 rows at 20 per 2 s on 4 idle processes: the rule, not the pool, sets S1's pace
    expect(progress.filter((p) => p.event === 'throttled').every((p) => p.pace === 'rule')).toBe(true);

    const pids = workerPids(out);
    expect(pids.length).toBeGreaterThan(0);
    expect(await pool.stop('SIGTERM')).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
    expect((await apiStats()).sellers.S1!.requests).toBe(150);
  });

  it('stops cleanly on SIGTERM in the middle of a throttled run and carries on when started again', async () => {
    const pool: Running = stage.pool(4);
    const up = await runCli(['upload', join(FIXTURES_DIR, 'seller-b-60-korean.xlsx'), '--seller', 'S4', '--json'], env);
    expect(up.code).toBe(0);
    const { uploadId } = JSON.parse(up.stdout);
    await pool.waitFor(/"event":"throttled"/);
    const pids = workerPids(pool.output());
    const stoppedAt = Date.now();
    expect(await pool.stop('SIGTERM')).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(12_000);
    expect(pids.filter(alive)).toEqual([]);

    const mid = JSON.parse((await runCli(['status', '--upload', uploadId, '--json'], env)).stdout);
    expect(mid.uploads[0].done).toBe(false);
    const redisClient = stage.redis.client();
    expect(await redisClient.zcard('{pipeline}:registrations:active')).toBe(0);
    expect(await redisClient.llen('{pipeline}:registrations:active')).toBe(0);

    const again = stage.pool(4);
    const done = await runCli(['status', '--upload', uploadId, '--wait', '--json'], env, 120_000);
    const final = JSON.parse(done.stdout).uploads[0];
    expect(final).toMatchObject({ total: 60, registered: 59, failed: 1, pending: 0, done: true });
    const stats = await apiStats();
    expect(stats.sellers.S4).toMatchObject({ registered: 59, invalid: 1, requests: 60, tooMany: 0 });
    expect(await again.stop('SIGTERM')).toBe(0);
  });
});
