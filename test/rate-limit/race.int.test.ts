/**
 * The incident, reproduced: 16 OS processes ask one seller's limiter for permits
 * at the same moments, round after round, around window boundaries. The naive
 * GET-then-INCR limiter admits more than L in a window (so this test can see the
 * failure); the Lua limiter never lets L + 1 sends come closer than W + G.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { minGap } from '../helpers/limiter.js';

const CHILD = join(PACKAGE_ROOT, 'dist', 'bench', 'race-child.js');
const PROCESSES = 16;
const LIMIT = 5;
const WINDOW = 400;
const GUARD = 20;
const ROUNDS = 6;

let server: TestRedis;
beforeAll(async () => { server = await startRedis(); });
afterAll(async () => { await server?.stop(); });

async function race(mode: 'naive' | 'lua', seller: string, attempts: number, rounds = ROUNDS): Promise<number[][]> {
  const startAt = Date.now() + 1500; // every process is up and waiting by then
  const runs = Array.from({ length: PROCESSES }, () => new Promise<number[]>((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, String(server.port), mode, seller, String(LIMIT), String(WINDOW), String(GUARD), String(rounds), String(startAt), String(attempts)]);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out).grants) : reject(new Error(`race child exited ${code}`))));
  }));
  return Promise.all(runs);
}

describe('16 processes, one seller, at window boundaries', () => {
  it('the naive GET-then-INCR limiter admits more than L in a window', async () => {
    // the race needs two GETs to land between a GET and its INCR: most rounds show it, not
    // every one (a CI run once saw none in 6 rounds), so the naive limiter gets 12
    const rounds = 2 * ROUNDS;
    const perProcess = await race('naive', 'naive-seller', 3, rounds);
    const all = perProcess.flat().sort((a, b) => a - b);
    // each round is one fixed window: L grants at most were intended per round
    expect(all.length).toBeGreaterThan(LIMIT * rounds);
    expect(minGap(all, LIMIT)).toBeLessThan(WINDOW);
  });

  it('the Lua limiter never lets L + 1 grants come closer than W + G', async () => {
    // every process brings one row per round and waits its turn: 16 x 6 rows, all granted in the end
    const perProcess = await race('lua', 'lua-seller', 1);
    const all = perProcess.flat().sort((a, b) => a - b);
    expect(all).toHaveLength(PROCESSES * ROUNDS);
    expect(minGap(all, LIMIT)).toBeGreaterThanOrEqual(WINDOW + GUARD);
  });
});
