/**
 * WORKER_CONCURRENCY=auto with real processes: one worker process against an
 * API that answers in 200 ms runs several rows at once; against a fast API, one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { FIXTURES_DIR } from '../../src/paths.js';

let stage: Stage | undefined;
afterEach(async () => {
  await stage?.stop();
  stage = undefined;
});

/** The most requests the API received within any `ms` (its own clock). */
function mostWithin(times: number[], ms: number): number {
  const t = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < t.length; j++) {
    while (t[j]! - t[i]! >= ms) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

async function arrivals(latency: string): Promise<number[]> {
  stage = await startStage({ RATE_LIMIT_MAX: '1000', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '0', QUEUE_PREFIX: '{auto}' }, { MOCK_LATENCY_MS: latency });
  expect((await runCli(['upload', join(FIXTURES_DIR, 'seller-a-150.xlsx'), '--seller', 'A'], stage.env)).code).toBe(0);
  stage.pool(1);
  expect((await runCli(['status', '--wait', '--json'], stage.env, 120_000)).code).toBe(0);
  const { sellers } = await stage.stats();
  return sellers.A!.times!;
}

describe('WORKER_CONCURRENCY=auto', () => {
  it('runs several rows at once in one process when the API answers in 200 ms', async () => {
    const times = await arrivals('200');
    expect(times).toHaveLength(150);
    // one at a time, two requests would always arrive at least 200 ms apart
    expect(mostWithin(times, 150)).toBeGreaterThanOrEqual(6);
  });

  it('runs one row at a time when the API answers at once', async () => {
    const times = await arrivals('1');
    expect(times).toHaveLength(150);
    expect(mostWithin(times, 0.5)).toBe(1);
  });
});
