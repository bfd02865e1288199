/**
 * An outage and a row's attempts, with real worker processes: with MAX_ATTEMPTS=1 an
 * outage fails no row, also the calls that meet it before the breaker trips (a row's
 * last attempt without a usable answer fails only once the API has answered another
 * row since that row began failing); and one row the API keeps failing while it
 * answers the others opens no breaker and ends failed after its attempts, also when it is
 * sent alone and only a registered row sent again can tell it from an outage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { sampleProducts } from '../../src/fixtures/build-sheet.js';
import { finishedStatus, uploadProducts } from '../helpers/uploads.js';
import { until } from '../helpers/until.js';
import { apiFailingKey } from '../../src/steering/outage.js';
import { namespaceOf } from '../../src/keys.js';

let stage: Stage;
const dir = mkdtempSync(join(tmpdir(), 'br-outage-attempts-'));

const upload = (seller: string, products: ReturnType<typeof sampleProducts>) => uploadProducts(stage.env, dir, seller, products);
const finished = (uploadId: string, timeoutMs: number) => finishedStatus(stage.env, uploadId, timeoutMs);

const outage = (on: boolean) => fetch(`${stage.apiUrl}/_outage`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ on }) });

/** Uploads `rows` rows of `seller`; once `flowing` are registered, the API answers 503 for `outageMs`; the upload's final counts. */
async function throughOutage(seller: string, rows: number, flowing: number, outageMs: number) {
  const id = await upload(seller, sampleProducts(seller, rows));
  await until('rows flowing', async () => ((await stage.stats()).sellers[seller]?.registered ?? 0) >= flowing, 30_000);
  await outage(true);
  await new Promise((r) => setTimeout(r, outageMs));
  await outage(false);
  return (await finished(id, 120_000)).uploads[0];
}

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
    // one process, 3 attempts, the sheet's last row: its retries come after the others are done, in a
    // row (one row's retries count once toward the breaker, so more attempts would only take longer).
    // The sheet is uploaded with MAX_ATTEMPTS=1: the pool's count is the one that holds (jobs
    // enqueued with the producer's count failed after 1 call and were counted only by the pool's
    // reconciler, with no judgment of an outage)
    const one = stage.pool(1, { MAX_ATTEMPTS: '3' });
    await one.waitFor(/worker process ready/);
    const products = sampleProducts('ONE', 20);
    products[19] = { ...products[19]!, category: 'C0999' };
    const id = await upload('ONE', products);
    const done = await finished(id, 60_000);
    expect(done.uploads[0]).toMatchObject({ registered: 19, failed: 1, pending: 0 });
    expect(one.output()).toMatch(/gave up after 3 attempts: the API answered 503/);
    expect(one.output()).not.toMatch(/the registration API is unavailable/);

    // the sheet's last row may still meet a neighbour's answer after its first failure (several
    // rows of one process in flight at once); a sheet of that row alone, sent after the others
    // were answered, never does: its retries have nothing to be judged by, and without the
    // registered row sent again it would be held for good
    const loneRow = { ...sampleProducts('ONE', 21)[20]!, category: 'C0999' };
    const before = one.output().length;
    const loneId = await upload('ONE', [loneRow]);
    const lone = await finished(loneId, 60_000);
    expect(lone.uploads[0]).toMatchObject({ registered: 0, failed: 1, pending: 0 });
    expect(one.output().slice(before)).toMatch(/a registered row sent again was answered/);
    expect(one.output()).not.toMatch(/the registration API is unavailable/);

    // the sheet's last two rows: each saw the other failing (held until another row was answered)
    const two = sampleProducts('TWO', 20);
    for (const at of [18, 19]) two[at] = { ...two[at]!, category: 'C0999' };
    const twoId = await upload('TWO', two);
    const twoDone = await finished(twoId, 60_000);
    expect(twoDone.uploads[0]).toMatchObject({ registered: 18, failed: 2, pending: 0 });
    expect(one.output()).not.toMatch(/the registration API is unavailable/);
    // rows failing now: none, every failing row has ended
    const redis = stage.redis.client();
    expect(await redis.zrange(apiFailingKey(namespaceOf('{attempts}')), '0', '-1')).toEqual([]);
    await one.stop('SIGTERM');
  }, 150_000);

  it('a row alone in an outage: the registered row sent again gets no answer either, and the row is held, not failed', async () => {
    const alone = stage.pool(1, { MAX_ATTEMPTS: '3' });
    await alone.waitFor(/worker process ready/);
    await outage(true);
    const id = await upload('ALONE', sampleProducts('ALONE', 1));
    await until('the replay tried', async () => /a registered row sent again got no answer either/.test(alone.output()), 30_000);
    const held = JSON.parse((await runCli(['status', '--upload', id, '--json'], stage.env)).stdout);
    expect(held.uploads[0]).toMatchObject({ failed: 0, pending: 1 });
    expect(held.api.available).toBe(false);
    await outage(false);
    const done = await finished(id, 60_000);
    expect(done.uploads[0]).toMatchObject({ registered: 1, failed: 0, pending: 0 });
    await alone.stop('SIGTERM');
  }, 120_000);

  it('with MAX_ATTEMPTS=1, fails no row through an outage of 503s, also before the breaker trips', async () => {
    const pool = stage.pool(2);
    await pool.waitFor(/worker process ready/);
    const done = await throughOutage('MANY', 200, 30, 6000);
    expect(done).toMatchObject({ registered: 200, failed: 0, pending: 0 });
    expect(pool.output()).toMatch(/the registration API is unavailable/);
    await pool.stop('SIGTERM');
  }, 180_000);

  it('a pool set to more attempts than the producer: an outage fails none of the rows', async () => {
    const more = stage.pool(2, { MAX_ATTEMPTS: '3' });
    await more.waitFor(/worker process ready/);
    expect(await throughOutage('MORE', 60, 10, 4000)).toMatchObject({ registered: 60, failed: 0, pending: 0 });
    await more.stop('SIGTERM');
  }, 180_000);
});
