/**
 * The steering hash (pauses, cancels, the outage) is read once for the whole
 * pool by its supervisor, which sends each change to its processes
 * (src/steering/steer-relay.ts): an idle pool reads it about once per
 * PAUSE_POLL_MS, where each process reading it used to multiply that by the
 * processes; and a pause still reaches every process at once, including one
 * started after the pause (it reads the hash when it starts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startStage, workerPids, type Stage } from '../helpers/pipeline.js';
import { until } from '../helpers/until.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { PAUSE_POLL_MS } from '../../src/steering/pauses.js';

const PROCESSES = 4;
let stage: Stage;
const dir = mkdtempSync(join(tmpdir(), 'br-relay-'));

beforeAll(async () => {
  stage = await startStage({ RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', QUEUE_PREFIX: '{relay}' });
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

async function hgetallCalls(): Promise<number> {
  const stats = await stage.redis.client().info('commandstats');
  return Number(/cmdstat_hgetall:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

describe('the steering relay', () => {
  it('reads the steering hash about once per PAUSE_POLL_MS for a pool of 4 processes, and a pause reaches the processes started after it', async () => {
    const pool = stage.pool(PROCESSES);
    await until('every process ready', async () => (pool.output().match(/worker process ready/g) ?? []).length >= PROCESSES, 30_000);
    const windowMs = 3000;
    const before = await hgetallCalls();
    await new Promise((r) => setTimeout(r, windowMs));
    const reads = (await hgetallCalls()) - before;
    // one reader at PAUSE_POLL_MS reads about 30 times in 3 s (each process's own read every
    // RELAYED_READ_MS adds a few); a read in every process, as before, made about 120
    expect(reads).toBeGreaterThan((windowMs / PAUSE_POLL_MS) * 0.5);
    expect(reads).toBeLessThan((windowMs / PAUSE_POLL_MS) * 1.6);

    // paused while the pool runs; then every process is killed and restarted by the supervisor,
    // which sends nothing since (the hash has not changed): each new process reads it as it starts
    const paused = await runCli(['pause', '--seller', 'RL', '--reason', 'relay check'], stage.env);
    expect(paused.code).toBe(0);
    await new Promise((r) => setTimeout(r, 3 * PAUSE_POLL_MS));
    for (const pid of workerPids(pool.output())) process.kill(pid, 'SIGKILL');
    await until('every slot restarted', async () => (pool.output().match(/worker process ready/g) ?? []).length >= 2 * PROCESSES, 30_000);
    const file = join(dir, 'RL.xlsx');
    writeFileSync(file, await buildProductSheet(sampleProducts('RL', 40)));
    expect((await runCli(['upload', file, '--seller', 'RL', '--json'], stage.env)).code).toBe(0);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await stage.stats()).sellers.RL?.registered ?? 0).toBe(0);

    expect((await runCli(['resume', '--seller', 'RL'], stage.env)).code).toBe(0);
    await until('every row registered after the resume', async () => ((await stage.stats()).sellers.RL?.registered ?? 0) === 40, 30_000);
    await pool.stop('SIGTERM');
  }, 90_000);
});
