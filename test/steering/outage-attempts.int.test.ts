/**
 * An outage and a row's attempts, with real worker processes: with MAX_ATTEMPTS=1 an
 * outage fails no row, also the calls that meet it before the breaker trips (a row's
 * last attempt without a usable answer fails only once the API has answered another
 * row since that row began failing); and one row the API keeps failing while it
 * answers the others opens no breaker and ends failed after its attempts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type Running } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { sampleProducts } from '../../src/fixtures/build-sheet.js';
import { uploadProducts } from '../helpers/uploads.js';
import { until } from '../helpers/until.js';

let stage: Stage;
let pool: Running;
const dir = mkdtempSync(join(tmpdir(), 'br-outage-attempts-'));

const upload = (seller: string, products: ReturnType<typeof sampleProducts>) => uploadProducts(stage.env, dir, seller, products);

const outage = (on: boolean) => fetch(`${stage.apiUrl}/_outage`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ on }) });

beforeAll(async () => {
  stage = await startStage(
    { QUEUE_PREFIX: '{attempts}', MAX_ATTEMPTS: '1', RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', API_TIMEOUT_MS: '2000' },
    { MOCK_FAIL_CATEGORIES: 'C0999', MOCK_LATENCY_MS: '20-60' },
  );
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('an outage and the attempts of a row', () => {
  it('one row the API keeps failing while it answers the others ends failed, and opens no breaker', async () => {
    // one process, 5 attempts, the sheet's last row: its retries come after the others are done, in a row
    const one = stage.pool(1, { MAX_ATTEMPTS: '5' });
    await one.waitFor(/worker process ready/);
    const products = sampleProducts('ONE', 20);
    products[19] = { ...products[19]!, category: 'C0999' };
    const id = await upload('ONE', products);
    const done = JSON.parse((await runCli(['status', '--wait', '--upload', id, '--json'], stage.env, 60_000)).stdout);
    expect(done.uploads[0]).toMatchObject({ registered: 19, failed: 1, pending: 0 });
    expect(one.output()).not.toMatch(/the registration API is unavailable/);
    await one.stop('SIGTERM');
  }, 90_000);

  it('with MAX_ATTEMPTS=1, fails no row through an outage of 503s, also before the breaker trips', async () => {
    pool = stage.pool(2);
    await pool.waitFor(/worker process ready/);
    const id = await upload('MANY', sampleProducts('MANY', 200));
    await until('rows flowing', async () => ((await stage.stats()).sellers.MANY?.registered ?? 0) >= 30, 30_000);
    await outage(true);
    await new Promise((r) => setTimeout(r, 6000));
    await outage(false);
    const done = JSON.parse((await runCli(['status', '--wait', '--upload', id, '--json'], stage.env, 120_000)).stdout);
    expect(done.uploads[0]).toMatchObject({ registered: 200, failed: 0, pending: 0 });
    expect(pool.output()).toMatch(/the registration API is unavailable/);
  }, 180_000);
});
