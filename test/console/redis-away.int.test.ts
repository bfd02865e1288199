/**
 * The console while its Redis is away (stopped) or frozen (SIGSTOP), against a
 * real redis-server: every request that needs Redis answers 503 with one
 * sentence instead of hanging, an upload refused then is not queued once Redis
 * is back, and a check (which needs no Redis) still works. Also: with no
 * operator token, open access answers only to a loopback Host (a page elsewhere
 * whose name points here, DNS rebinding, gets nothing).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signSellerToken } from '../../src/console/access.js';
import { STALL_MS } from '../../src/console/live.js';
import { startConsole, type RunningConsole } from '../../src/cli/console.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const SECRET = 'redis-away-secret-0123456789';
const WAIT_MS = 800;
let redis: TestRedis;
let running: RunningConsole;
const quiet = createLogger({ level: 'error', pretty: false }, new Writable({ write(_c, _e, done) { done(); } }));

beforeAll(async () => {
  redis = await startRedis();
  // open local access: no operator token, a loopback host
  const config = loadConfig({ REDIS_URL: redis.url, CONSOLE_SECRET: SECRET, CONSOLE_HOST: '127.0.0.1', LOG_LEVEL: 'error' });
  running = await startConsole(config, quiet, { port: 0, redisWaitMs: WAIT_MS });
}, 60_000);
afterAll(async () => {
  await running?.close();
  await redis?.stop();
});

/** A request with a Host header of its own (fetch always sends the URL's). */
function withHost(method: string, path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; body: string }> {
  const target = new URL(url(path));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
    req.end(body);
  });
}
const url = (path: string) => `${running.url}${path}`;
const sellerPath = () => `/s/${signSellerToken(SECRET, 'AWAY1', Date.now() + 3_600_000)}`;

function upload(dryRun: boolean): Promise<Response> {
  const f = new FormData();
  f.append('file', new Blob([new Uint8Array(readFileSync(join(FIXTURES_DIR, 'seller-c-7.xlsx')))]), 'c.xlsx');
  f.append('seller', 'AWAY1');
  if (dryRun) f.append('dryRun', '1');
  return fetch(url('/api/uploads'), { method: 'POST', body: f });
}

/** Each request that needs Redis: its answer's status, body and how long it took. */
async function everyRedisRequest() {
  const requests: Array<[string, () => Promise<Response>]> = [
    ['GET /api/uploads', () => fetch(url('/api/uploads'))],
    ['GET /ops', () => fetch(url('/ops'))],
    ['GET /s/<token>', () => fetch(url(sellerPath()))],
    ['POST pause', () => fetch(url('/api/sellers/AWAY1/pause'), { method: 'POST' })],
    ['POST pause-all', () => fetch(url('/api/pause-all'), { method: 'POST' })],
    ['GET report', () => fetch(url('/api/uploads/0123456789abcdef01234567/report'))],
    ['POST upload', () => upload(false)],
  ];
  const out: Array<{ what: string; status: number; ms: number; body: string; type: string }> = [];
  for (const [what, send] of requests) {
    const started = Date.now();
    const res = await send();
    out.push({ what, status: res.status, ms: Date.now() - started, body: await res.text(), type: res.headers.get('content-type') ?? '' });
  }
  return out;
}

/** The events of an open /api/events stream as they arrive: name, data and when (ms). */
function listen(path: string) {
  const controller = new AbortController();
  const events: Array<{ event: string; data: string; at: number }> = [];
  const reading = (async () => {
    const res = await fetch(url(path), { signal: controller.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        events.push({ event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message', data: /^data: (.*)$/m.exec(block)?.[1] ?? '', at: Date.now() });
      }
    }
  })().catch(() => undefined);
  const after = (event: string, t: number) => events.filter((e) => e.event === event && e.at >= t);
  return { events, after, close: () => { controller.abort(); return reading; } };
}

describe('console while Redis is away', () => {
  it('answers 503 with one sentence within the wait while Redis is stopped, queues nothing for later, and serves again once it is back', async () => {
    await until('the console answers', async () => (await fetch(url('/api/uploads'))).status === 200, 20_000);
    redis.process.kill('SIGKILL');
    await until('the console sees Redis gone', async () => (await fetch(url('/healthz'))).status === 503, 10_000);

    for (const r of await everyRedisRequest()) {
      expect(r.status, r.what).toBe(503);
      // the connection is not ready: each waits up to the smaller of READY_WAIT_MS and the wait
      expect(r.ms, r.what).toBeLessThan(WAIT_MS + 1000);
      if (r.what.includes('GET /ops') || r.what.includes('GET /s/')) {
        expect(r.type).toContain('text/html');
        expect(r.body).toContain('cannot reach its database');
      } else {
        expect(JSON.parse(r.body)).toEqual({ error: expect.stringMatching(/^Redis does not answer/) });
      }
      expect(r.body).not.toMatch(/\n\s+at /); // no stack trace
    }
    // a check needs no Redis: it still answers
    const check = await upload(true);
    expect(check.status).toBe(200);
    expect(await check.json()).toMatchObject({ sellerId: 'AWAY1', dryRun: true, valid: 7 });

    await redis.restart();
    await until('the console serves again', async () => (await fetch(url('/api/uploads'))).status === 200, 20_000);
    // the refused upload did not go through once Redis came back
    await new Promise((r) => setTimeout(r, 1000));
    expect(((await (await fetch(url('/api/uploads'))).json()) as { uploads: unknown[] }).uploads).toEqual([]);
    const again = await upload(false);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ enqueued: 7, alreadyUploaded: false });
  }, 60_000);

  it('answers 503 after the wait when Redis is connected but frozen', async () => {
    redis.process.kill('SIGSTOP');
    try {
      const started = Date.now();
      const res = await fetch(url('/api/uploads'));
      expect(res.status).toBe(503);
      expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 50);
      expect(Date.now() - started).toBeLessThan(WAIT_MS + 3000);
      expect(await res.json()).toEqual({ error: expect.stringMatching(/^Redis does not answer/) });
      const page = await fetch(url('/ops'));
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('cannot reach its database');
      // a check still answers, after the wait, without what Redis would have said of an earlier upload
      const checkStarted = Date.now();
      const check = await upload(true);
      expect(check.status).toBe(200);
      expect(await check.json()).toMatchObject({ sellerId: 'AWAY1', dryRun: true, valid: 7, alreadyUploaded: false });
      expect(Date.now() - checkStarted).toBeLessThan(WAIT_MS + 3000);
    } finally {
      redis.process.kill('SIGCONT');
    }
    await until('the console serves again', async () => (await fetch(url('/api/uploads'))).status === 200, 20_000);
  }, 60_000);

  it('keeps the live stream talking while Redis is shut down or frozen: "unavailable" events, then status again once it answers', async () => {
    await until('the console answers', async () => (await fetch(url('/api/uploads'))).status === 200, 20_000);
    const stream = listen('/api/events');
    try {
      await until('a first status event', () => stream.after('status', 0).length > 0, 10_000);

      // SIGTERM shuts Redis down as `redis-cli shutdown` does: the connection closes and the console's reads wait for it
      redis.process.kill('SIGTERM');
      const downAt = Date.now();
      await until('an unavailable event', () => stream.after('unavailable', downAt).length > 0, STALL_MS + 5000, 50);
      const [first] = stream.after('unavailable', downAt);
      expect(JSON.parse(first!.data)).toEqual({ error: expect.stringMatching(/^Redis does not answer/) });
      // and it goes on saying so: the stream is not silent while Redis is away
      await until('more unavailable events', () => stream.after('unavailable', first!.at + 1).length >= 2, 5000, 50);
      expect(stream.after('status', downAt + 100)).toEqual([]);

      await redis.restart();
      const upAt = Date.now();
      await until('status events once Redis is back', () => stream.after('status', upAt).length > 0, 20_000);

      redis.process.kill('SIGSTOP');
      const frozenAt = Date.now();
      try {
        await until('an unavailable event while Redis is frozen', () => stream.after('unavailable', frozenAt).length > 0, STALL_MS + 5000, 50);
      } finally {
        redis.process.kill('SIGCONT');
      }
      const thawedAt = Date.now();
      await until('status events once Redis answers', () => stream.after('status', thawedAt).length > 0, 20_000);
    } finally {
      await stream.close();
    }
  }, 90_000);

  it('with no operator token, answers only to a loopback Host: a rebound name gets 403 and changes nothing', async () => {
    const port = new URL(running.url).port;
    const evil = { Host: `evil.example:${port}`, Origin: `http://evil.example:${port}`, 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/json' };
    const read = await withHost('GET', '/api/uploads', { Host: `evil.example:${port}` });
    expect(read.status).toBe(403);
    expect(JSON.parse(read.body)).toEqual({ error: expect.stringContaining('loopback') });
    expect((await withHost('GET', '/ops', { Host: `evil.example:${port}` })).status).toBe(403);
    const write = await withHost('POST', '/api/pause-all', evil, '{"reason":"pwned"}');
    expect(write.status).toBe(403);
    const view = (await (await fetch(url('/api/uploads'))).json()) as { sellers: Array<{ paused: unknown }> };
    expect(view.sellers.every((s) => s.paused === null)).toBe(true);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect((await withHost('GET', '/api/uploads', { Host: host })).status, host).toBe(200);
    }
  });
});
