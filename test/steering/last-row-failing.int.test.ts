/**
 * A sheet's last row that the API keeps failing (503) while it answers the rest, with a
 * pool of 16 processes at a real API's latency: it ends failed after its attempts, and no
 * breaker opens. The other rows are granted in the same burst, before it, and answered
 * while it is out; judged by their grants they did not show the API answering since it
 * began failing, and the row was held as in an outage for ever (the upload never ended).
 * Three uploads in a row, one after the other, so that no other upload's answers help.
 * Seven rows spread through a sheet end failed too, without opening the breaker. And a row
 * failing alone, with no other row answered after it left and none ever registered: the
 * pool cannot tell it from an outage, holds it and says the API is unavailable, until
 * another row is answered; once rows were registered, one of them sent again tells,
 * also for two rows failing together, of which only one may be sent again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { finishedStatus, uploadProducts } from '../helpers/uploads.js';
import { until } from '../helpers/until.js';
import { sampleProducts } from '../../src/fixtures/build-sheet.js';

let stage: Stage;
const dir = mkdtempSync(join(tmpdir(), 'br-last-row-failing-'));
const upload = (seller: string, products: ReturnType<typeof sampleProducts>) => uploadProducts(stage.env, dir, seller, products);
const finished = (uploadId: string, timeoutMs: number) => finishedStatus(stage.env, uploadId, timeoutMs);

beforeAll(async () => {
  stage = await startStage({ QUEUE_PREFIX: '{last-row}', MAX_ATTEMPTS: '3' }, { MOCK_FAIL_CATEGORIES: 'C0999', MOCK_LATENCY_MS: '100-300' });
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('a sheet\'s last row the API keeps failing', () => {
  // first: with no row of the queue ever registered, nothing can tell it from an outage
  it('alone, with nothing else answered and nothing ever registered, is held and the API shown unavailable; it fails once another row is answered; with rows registered before, at once', async () => {
    const pool = stage.pool(4);
    await pool.waitFor(/worker process ready/);
    const lone = sampleProducts('LONE', 1);
    lone[0] = { ...lone[0]!, category: 'C0999' };
    const loneId = await upload('LONE', lone);
    // its attempts used, it cannot be told from an outage: held, and said so
    await until('the API shown unavailable', async () => JSON.parse((await runCli(['status', '--json'], stage.env)).stdout).api.available === false, 30_000);
    const held = JSON.parse((await runCli(['status', '--upload', loneId, '--json'], stage.env)).stdout);
    expect(held.uploads[0]).toMatchObject({ failed: 0, pending: 1 });
    // the status names the row, so that an operator can tell it from an outage
    expect(held.api.failing).toEqual([{ uploadId: loneId, row: 2 }]);
    expect((await runCli(['status'], stage.env)).stdout).toContain(`latest calls without an answer: upload ${loneId} row 2\n`);

    // another seller's rows: one goes as the probe, is answered, and the pool resumes
    const good = await finished(await upload('GOOD', sampleProducts('GOOD', 5)), 45_000);
    expect(good.uploads[0]).toMatchObject({ registered: 5, failed: 0, pending: 0 });
    const done = await finished(loneId, 45_000);
    expect(done.uploads[0]).toMatchObject({ registered: 0, failed: 1, pending: 0 });
    expect(done.api.available).toBe(true);
    expect(pool.output()).toMatch(/the registration API answers again/);

    // now rows the API registered are at hand: one sent again tells this row from an outage
    const again = sampleProducts('LONE2', 1);
    again[0] = { ...again[0]!, category: 'C0999' };
    const againDone = await finished(await upload('LONE2', again), 45_000);
    expect(againDone.uploads[0]).toMatchObject({ registered: 0, failed: 1, pending: 0 });
    expect(againDone.api.available).toBe(true);
    expect(pool.output()).toMatch(/a registered row sent again was answered/);
    await pool.stop('SIGTERM');
  }, 180_000);

  it('ends failed after its attempts, with 16 processes, in 3 uploads in a row', async () => {
    const pool = stage.pool(16);
    await pool.waitFor(/worker process ready/);
    for (let run = 1; run <= 3; run++) {
      const products = sampleProducts(`LAST${run}`, 20);
      products[19] = { ...products[19]!, category: 'C0999' };
      const done = await finished(await upload(`LAST${run}`, products), 45_000);
      expect(done.uploads[0], `run ${run}`).toMatchObject({ registered: 19, failed: 1, pending: 0 });
    }
    expect(pool.output()).toMatch(/gave up after 3 attempts: the API answered 503/);
    expect(pool.output()).not.toMatch(/the registration API is unavailable/);
    await pool.stop('SIGTERM');
  }, 240_000);

  it('seven of a sheet\'s rows, spread through it, end failed and stop no one: their retries, once the rest are done, are not an outage', async () => {
    // the last rows standing all fail, in several processes each: counted as an outage's, they
    // opened the breaker, and with no row left to answer a probe it never closed (the upload
    // never ended)
    const pool = stage.pool(16, { MAX_ATTEMPTS: '5' });
    await pool.waitFor(/worker process ready/);
    const products = sampleProducts('SPREAD', 20);
    for (const at of [1, 4, 7, 10, 13, 16, 19]) products[at] = { ...products[at]!, category: 'C0999' };
    const done = await finished(await upload('SPREAD', products), 60_000);
    expect(done.uploads[0]).toMatchObject({ registered: 13, failed: 7, pending: 0 });
    expect(pool.output()).not.toMatch(/the registration API is unavailable/);
    await pool.stop('SIGTERM');
  }, 120_000);

  it('two rows failing together with nothing else sent: both end failed, the API never shown unavailable, in 4 sheets in a row', async () => {
    // both rows' last attempts come within a second of each other. The first sends a registered
    // row again, answered; the pool sends one such row per 2 s, so the second is refused one and
    // is judged by the first's answer. Judged before that answer came (its own call returning
    // while the other's replay was out), it was held as an outage's row and the breaker opened;
    // with no other row to answer a probe, it was held for good and the sheet never ended
    const pool = stage.pool(1, { MAX_ATTEMPTS: '2' });
    await pool.waitFor(/worker process ready/);
    expect((await finished(await upload('PAIR', sampleProducts('PAIR', 1)), 30_000)).uploads[0]).toMatchObject({ registered: 1 });
    for (let run = 1; run <= 4; run++) {
      const pair = sampleProducts(`PAIR${run}`, 2).map((p) => ({ ...p, category: 'C0999' }));
      const done = await finished(await upload(`PAIR${run}`, pair), 30_000);
      expect(done.uploads[0], `sheet ${run}`).toMatchObject({ registered: 0, failed: 2, pending: 0 });
    }
    expect(pool.output()).toMatch(/a registered row sent again was answered/);
    expect(pool.output()).not.toMatch(/the registration API is unavailable/);
    await pool.stop('SIGTERM');
  }, 300_000);
});
