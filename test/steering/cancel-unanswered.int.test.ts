/**
 * A cancel that meets rows whose call left and got no answer: the marketplace may
 * have registered them, and no call may leave to ask. Such a row ends `cancelled`
 * with a reason that says so; only a row no call of which left is "cancelled before
 * it was sent". Checked against the mock API's own record of what it registered,
 * with real worker processes: answers lost on the way back (the row waits for its
 * retry when the cancel comes), and a pool killed while its calls were out (the
 * rows come back as stalled jobs after the cancel).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, runCli, startCli, type Running, poolReady } from '../helpers/cli.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { alive, workerPids } from '../helpers/pipeline.js';
import { until } from '../helpers/until.js';
import { MockRegistrationApi, type MockApiOptions } from '../../src/mock-api/server.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { loadConfig } from '../../src/config.js';
import { readReportRows } from '../../src/report/upload-report.js';
import { defineCommands } from '../../src/lua-commands.js';
import { cancelAfterCallDetail, cancelDetail } from '../../src/steering/cancel.js';

const dir = mkdtempSync(join(tmpdir(), 'br-cancel-unanswered-'));
let redis: TestRedis;
let api: MockRegistrationApi;
/** The mock API's options, changed between the cases. */
const apiOpts: MockApiOptions = { limit: 1000, windowMs: 1000 };
let env: NodeJS.ProcessEnv;
const pools: Running[] = [];

beforeAll(async () => {
  redis = await startRedis();
  api = new MockRegistrationApi(apiOpts);
  const port = await api.listen(0);
  env = baseEnv({
    REDIS_URL: redis.url, REGISTRATION_API_URL: `http://127.0.0.1:${port}`, QUEUE_PREFIX: '{unanswered}',
    RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', LOCK_DURATION_MS: '2000', SHUTDOWN_TIMEOUT_MS: '3000',
  });
}, 30_000);

afterAll(async () => {
  for (const p of pools) await p.stop('SIGKILL');
  await api?.close();
  await redis?.stop();
});

/** The pool and its worker processes, killed at once (a supervisor's processes outlive it by a few seconds). */
async function kill(pool: Running): Promise<void> {
  const pids = workerPids(pool.output());
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await pool.stop('SIGKILL');
  await until('the pool gone', () => pids.every((pid) => !alive(pid)), 5000);
}

async function upload(seller: string, rows: number): Promise<string> {
  const file = join(dir, `${seller}.xlsx`);
  writeFileSync(file, await buildProductSheet(sampleProducts(seller, rows)));
  const res = await runCli(['upload', file, '--seller', seller, '--json'], env);
  expect(res.code).toBe(0);
  return (JSON.parse(res.stdout) as { uploadId: string }).uploadId;
}

/** The mock API's registrations (201) of the seller, by idempotency key. */
const registeredKeys = (seller: string) => api.registeredKeys(seller);

/** Each row's status and reason as the report gives them, once the upload is done. */
async function endOf(uploadId: string) {
  const client = defineCommands(redis.client());
  try {
    return (await readReportRows(client, loadConfig(env), uploadId)).rows.map((r) => ({ key: `${uploadId}:${r.row}`, status: r.status, reason: r.reason }));
  } finally {
    client.disconnect();
  }
}

async function done(uploadId: string): Promise<boolean> {
  const res = await runCli(['status', '--upload', uploadId, '--json'], env);
  return (JSON.parse(res.stdout) as { uploads: Array<{ done: boolean }> }).uploads[0]?.done === true;
}

describe('cancel after calls that got no answer', () => {
  it('a row whose answer was lost and that waits for its retry is not called unsent: the marketplace may have it', async () => {
    // every registration's connection is dropped once it is made: the row is registered, its worker never hears so
    apiOpts.dropRate = 1;
    const pool = startCli(['workers', '--processes', '2', '--concurrency', '8'], env);
    pools.push(pool);
    await poolReady(pool, 2, 30_000);
    const uploadId = await upload('LOST', 40);
    // the first window's 10 rows are registered, their answers lost: they wait for a retry (1 s or more)
    await until('the first window registered', () => registeredKeys('LOST').size >= 10, 15_000);
    const cancel = await runCli(['cancel', '--upload', uploadId], env);
    expect(cancel.code).toBe(0);
    await until('the upload done', () => done(uploadId), 20_000);

    const rows = await endOf(uploadId);
    const atApi = registeredKeys('LOST');
    for (const r of rows) {
      if (r.status === 'registered') expect(atApi.has(r.key), r.key).toBe(true);
      else expect(r.status, r.key).toBe('cancelled');
      // a row the marketplace registered is never said to be unsent
      if (atApi.has(r.key)) expect(r.reason, r.key).not.toBe(cancelDetail.reason);
      if (r.reason === cancelDetail.reason) expect(atApi.has(r.key), r.key).toBe(false);
    }
    // the rows in their retry's wait when the cancel came say the marketplace may have them
    const mayHave = rows.filter((r) => r.reason === cancelAfterCallDetail.reason);
    expect(mayHave.length).toBeGreaterThan(0);
    for (const r of mayHave) expect(atApi.has(r.key), r.key).toBe(true);
    expect(rows.filter((r) => r.reason === cancelDetail.reason).length).toBeGreaterThanOrEqual(20);
    await kill(pool);
    apiOpts.dropRate = 0;

    // the same file again brings the cancelled rows back under new jobs, and a cancel before
    // any of them is sent (no pool runs) ends them again: the rows whose call may have left
    // still say so (their new jobs had forgotten it, and were called unsent)
    const again = await runCli(['upload', join(dir, 'LOST.xlsx'), '--seller', 'LOST', '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ uploadId, enqueued: rows.filter((r) => r.status === 'cancelled').length });
    expect((await runCli(['cancel', '--upload', uploadId], env)).code).toBe(0);
    expect(await done(uploadId)).toBe(true);
    const twice = await endOf(uploadId);
    expect(twice.map((r) => `${r.key} ${r.reason}`)).toEqual(rows.map((r) => `${r.key} ${r.reason}`));
    expect(api.sellerStats('LOST')).toMatchObject({ registered: atApi.size });
  }, 60_000);

  it('a row whose worker was killed mid-call and that comes back as a stalled job after the cancel is not called unsent', async () => {
    // each call is answered only after 3 s: the pool is killed while every one of them is out.
    // A namespace of its own: the lost answers of the case before left the API marked unavailable in the first
    env = { ...env, QUEUE_PREFIX: '{killed}' };
    apiOpts.latencyMs = { min: 3000, max: 3000 };
    const first = startCli(['workers', '--processes', '2', '--concurrency', '8'], env);
    pools.push(first);
    await poolReady(first, 2, 30_000);
    const uploadId = await upload('KILLED', 6);
    await until('every row registered, none answered', () => registeredKeys('KILLED').size === 6, 15_000);
    await kill(first);
    apiOpts.latencyMs = undefined;

    // the jobs are still locked by the dead workers: cancel leaves them, the next pool's stalled check brings them back
    const cancel = await runCli(['cancel', '--upload', uploadId], env);
    expect(cancel.code).toBe(0);
    const second = startCli(['workers', '--processes', '2'], env);
    pools.push(second);
    await until('the upload done', () => done(uploadId), 30_000);

    const rows = await endOf(uploadId);
    expect(rows.map((r) => r.status)).toEqual(Array(6).fill('cancelled'));
    for (const r of rows) expect(r.reason, r.key).toBe(cancelAfterCallDetail.reason);
    // and nothing was sent after the cancel: each key reached the API once
    expect(api.sellerStats('KILLED')).toMatchObject({ requests: 6, registered: 6, replays: 0 });
    await kill(second);
  }, 60_000);
});
