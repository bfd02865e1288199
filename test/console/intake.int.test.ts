/**
 * The console's intake line (src/console/intake.ts) against a real redis-server:
 * many sellers' sheets posted at once are each read and enqueued whole, answered
 * in turn; a sheet posted while the line is full is refused at once with one
 * sentence, and nothing of it is queued.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type RunningConsole } from '../../src/cli/console.js';
import { lineFull } from '../../src/console/api-error.js';
import { loadConfig } from '../../src/config.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { createLogger } from '../../src/logger.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const quiet = createLogger({ level: 'error', pretty: false }, new Writable({ write(_c, _e, done) { done(); } }));
let redis: TestRedis;
const consoles: RunningConsole[] = [];

beforeAll(async () => {
  redis = await startRedis();
}, 60_000);
afterAll(async () => {
  for (const c of consoles) await c.close();
  await redis?.stop();
});

async function consoleWith(prefix: string, opts: Parameters<typeof startConsole>[2]): Promise<RunningConsole> {
  // open local access: no operator token, a loopback host
  const config = loadConfig({ REDIS_URL: redis.url, QUEUE_PREFIX: prefix, CONSOLE_HOST: '127.0.0.1', LOG_LEVEL: 'error' });
  const c = await startConsole(config, quiet, { port: 0, ...opts });
  consoles.push(c);
  return c;
}

async function post(c: RunningConsole, seller: string, sheet: Buffer): Promise<{ status: number; body: Record<string, unknown>; answeredAfterMs: number }> {
  const started = Date.now();
  const f = new FormData();
  f.append('file', new Blob([new Uint8Array(sheet)]), `${seller}.xlsx`);
  f.append('seller', seller);
  const res = await fetch(`${c.url}/api/uploads`, { method: 'POST', body: f });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, answeredAfterMs: Date.now() - started };
}

async function uploadsOf(c: RunningConsole): Promise<Array<{ sellerId: string; total: number }>> {
  return ((await (await fetch(`${c.url}/api/uploads`)).json()) as { uploads: Array<{ sellerId: string; total: number }> }).uploads;
}

describe('the console intake line', () => {
  it('enqueues every row of 40 sellers\' 500-row sheets posted at once, answering them in turn', async () => {
    const c = await consoleWith('{intake-many}', {});
    const sheets = await Promise.all(Array.from({ length: 40 }, (_, i) => buildProductSheet(sampleProducts(`MANY${i}`, 500))));
    const answers = await Promise.all(sheets.map((sheet, i) => post(c, `many-${i}`, sheet)));
    for (const a of answers) expect(a, JSON.stringify(a.body)).toMatchObject({ status: 200, body: { enqueued: 500, alreadyUploaded: false } });
    const uploads = await uploadsOf(c);
    expect(uploads).toHaveLength(40);
    expect(uploads.every((u) => u.total === 500)).toBe(true);
    // read in turn, the first sellers are answered long before the last: with all 40 read at
    // once, each sheet's reading ended near the end of all of them, and so did every answer
    const times = answers.map((a) => a.answeredAfterMs).sort((a, b) => a - b);
    expect(times[19]!).toBeLessThan(0.75 * times[39]!);
  }, 120_000);

  it('refuses a sheet at once when the line is full, and queues nothing of it; those in line go on', async () => {
    const c = await consoleWith('{intake-full}', { intake: { size: 1, maxWaiting: 1, maxWaitingBytes: 1e9 }, redisWaitMs: 20_000 });
    const sheet = readFileSync(join(FIXTURES_DIR, 'seller-c-7.xlsx'));
    await until('the console answers', async () => (await fetch(`${c.url}/api/uploads`)).status === 200, 20_000);
    // Redis frozen: the first upload holds its turn, waiting for Redis
    redis.process.kill('SIGSTOP');
    let resumed = false;
    try {
      const first = post(c, 'full-a', sheet);
      await new Promise((r) => setTimeout(r, 500));
      const second = post(c, 'full-b', sheet);
      await new Promise((r) => setTimeout(r, 500));
      const refused = await post(c, 'full-c', sheet);
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ error: lineFull(1) });
      expect(refused.answeredAfterMs).toBeLessThan(2000);
      redis.process.kill('SIGCONT');
      resumed = true;
      expect(await first).toMatchObject({ status: 200, body: { sellerId: 'full-a', enqueued: 7 } });
      expect(await second).toMatchObject({ status: 200, body: { sellerId: 'full-b', enqueued: 7 } });
    } finally {
      if (!resumed) redis.process.kill('SIGCONT');
    }
    expect((await uploadsOf(c)).map((u) => u.sellerId).sort()).toEqual(['full-a', 'full-b']);
    // the refused sheet goes through when sent again
    expect(await post(c, 'full-c', sheet)).toMatchObject({ status: 200, body: { enqueued: 7 } });
  }, 60_000);

  it('refuses every sheet at once while Redis is away, not one turn after another', async () => {
    const c = await consoleWith('{intake-away}', { intake: { size: 1, maxWaiting: 20, maxWaitingBytes: 1e9 } });
    const sheet = readFileSync(join(FIXTURES_DIR, 'seller-c-7.xlsx'));
    await until('the console answers', async () => (await fetch(`${c.url}/api/uploads`)).status === 200, 20_000);
    redis.process.kill('SIGKILL');
    try {
      await until('the console sees Redis gone', async () => (await fetch(`${c.url}/healthz`)).status === 503, 10_000);
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post(c, `away-${i}`, sheet)));
      for (const a of answers) expect(a).toMatchObject({ status: 503, body: { error: expect.stringMatching(/^Redis does not answer/) } });
      // one shared wait for Redis (READY_WAIT_MS, 2 s), not six in turn
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await redis.restart();
    }
    await until('the console serves again', async () => (await fetch(`${c.url}/api/uploads`)).status === 200, 20_000);
    expect(await post(c, 'away-0', sheet)).toMatchObject({ status: 200, body: { enqueued: 7 } });
  }, 60_000);
});
