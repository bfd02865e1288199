/**
 * A sheet's last row that the API keeps failing (503) while it answers the rest, with a
 * pool of 16 processes at a real API's latency: it ends failed after its attempts, and no
 * breaker opens. The other rows are granted in the same burst, before it, and answered
 * while it is out; judged by their grants they did not show the API answering since it
 * began failing, and the row was held as in an outage for ever (the upload never ended).
 * Three uploads in a row, one after the other, so that no other upload's answers help.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';

let stage: Stage;
const dir = mkdtempSync(join(tmpdir(), 'br-last-row-failing-'));

beforeAll(async () => {
  stage = await startStage({ QUEUE_PREFIX: '{last-row}', MAX_ATTEMPTS: '3' }, { MOCK_FAIL_CATEGORIES: 'C0999', MOCK_LATENCY_MS: '100-300' });
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('a sheet\'s last row the API keeps failing', () => {
  it('ends failed after its attempts, with 16 processes, in 3 uploads in a row', async () => {
    const pool = stage.pool(16);
    await pool.waitFor(/worker process ready/);
    for (let run = 1; run <= 3; run++) {
      const products = sampleProducts(`LAST${run}`, 20);
      products[19] = { ...products[19]!, category: 'C0999' };
      const file = join(dir, `last${run}.xlsx`);
      writeFileSync(file, await buildProductSheet(products));
      const res = await runCli(['upload', file, '--seller', `LAST${run}`, '--json'], stage.env);
      expect(res.code).toBe(0);
      const done = await runCli(['status', '--wait', '--upload', JSON.parse(res.stdout).uploadId, '--json'], stage.env, 45_000);
      expect(JSON.parse(done.stdout).uploads[0], `run ${run}`).toMatchObject({ registered: 19, failed: 1, pending: 0 });
    }
    expect(pool.output()).toMatch(/gave up after 3 attempts: the API answered 503/);
    expect(pool.output()).not.toMatch(/the registration API is unavailable/);
    await pool.stop('SIGTERM');
  }, 240_000);
});
