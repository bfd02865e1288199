/**
 * A Redis that loses its writes must not let a seller over its rule: real worker
 * processes, a redis-server restarted with nothing kept (every limiter record of
 * the window's sends gone), and the mock API enforcing the rule itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGLISH_HEADERS, buildSheet } from '../../src/fixtures/build-sheet.js';

const dir = mkdtempSync(join(tmpdir(), 'bulk-register-lost-'));
async function sheetFile(name: string, rows: unknown[][]): Promise<string> {
  const path = join(dir, name);
  writeFileSync(path, await buildSheet(ENGLISH_HEADERS, rows as never));
  return path;
}

let stage: Stage;
const LIMIT = 20;
const WINDOW = 3000;

beforeAll(async () => {
  stage = await startStage(
    { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW), RATE_LIMIT_GUARD_MS: '100', QUEUE_PREFIX: '{lost}' },
    { MOCK_LATENCY_MS: '5-15' },
  );
});

afterAll(async () => {
  await stage?.stop();
});

const rows = (prefix: string) => Array.from({ length: LIMIT }, (_, i) => [`${prefix}-${i}`, 'Lost writes', 1000, 1, 'C0101']);

describe('after Redis lost its writes', () => {
  it('no seller sends again until a whole window has passed: no 429', async () => {
    const pool = stage.pool(2);
    await pool.waitFor(/worker process ready/);
    expect((await runCli(['upload', await sheetFile('first.xlsx', rows('A')), '--seller', 'L1'], stage.env)).code).toBe(0);
    for (;;) {
      const { sellers } = await stage.stats();
      if ((sellers.L1?.registered ?? 0) >= LIMIT) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    // the window is full; Redis restarts with nothing: the limiter forgets those 20 sends
    await stage.redis.restart();
    expect((await runCli(['upload', await sheetFile('second.xlsx', rows('B')), '--seller', 'L1'], stage.env)).code).toBe(0);
    const done = await runCli(['status', '--wait', '--json'], stage.env, 60_000);
    expect(done.code).toBe(0);
    const { sellers } = await stage.stats();
    expect(sellers.L1!.registered).toBe(2 * LIMIT);
    expect(sellers.L1!.tooMany).toBe(0);
    expect(pool.output()).toMatch(/Redis may have lost its last writes/);
  });
});
