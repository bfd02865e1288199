/** The console's JSON API and access rules over HTTP, against a real console process. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../../src/paths.js';
import { baseEnv, runCli } from '../helpers/cli.js';
import { OPS_TOKEN, SECRET, startConsoleStage, type ConsoleStage } from '../helpers/console-stage.js';

const MAX = 200_000;
let s: ConsoleStage;

beforeAll(async () => {
  s = await startConsoleStage({ CONSOLE_MAX_UPLOAD_BYTES: String(MAX) }, 1);
}, 60_000);
afterAll(async () => { await s?.stop(); });

const ops = { Authorization: `Bearer ${OPS_TOKEN}` };
const sheet = (name: string) => readFileSync(join(FIXTURES_DIR, name));

function form(file: Buffer, name: string, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  f.append('file', new Blob([new Uint8Array(file)]), name);
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

async function post(body: FormData | string, headers: Record<string, string> = ops) {
  const res = await fetch(`${s.url}/api/uploads`, { method: 'POST', body, headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

describe('console API', () => {
  it('answers with a CSP and nosniff, on pages, data and errors alike', async () => {
    for (const path of ['/ops', '/api/uploads', '/nowhere', `/s/${'x'.repeat(20)}`]) {
      const res = await fetch(`${s.url}${path}`, { headers: ops });
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const missing = await fetch(`${s.url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(Object.keys(await missing.json())).toEqual(['error']);
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });

  it('wants credentials: none is 401, a wrong token 403', async () => {
    const none = await fetch(`${s.url}/api/uploads`);
    expect(none.status).toBe(401);
    expect(Object.keys(await none.json())).toEqual(['error']);
    expect((await fetch(`${s.url}/api/uploads`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(403);
    expect((await fetch(`${s.url}/api/uploads`, { headers: ops })).status).toBe(200);
  });

  it('checks and enqueues like `upload`, with the same upload id; the seller of a seller token wins', async () => {
    const dry = await post(form(sheet('with-errors.xlsx'), 'with-errors.xlsx', { seller: 'API1', dryRun: '1' }));
    expect(dry.status).toBe(200);
    const cli = JSON.parse((await runCli(['upload', join(FIXTURES_DIR, 'with-errors.xlsx'), '--seller', 'API1', '--dry-run', '--json'], s.stage.env)).stdout);
    expect(dry.body).toEqual(cli);

    const link = s.sellerLink('API2');
    const token = link.slice(link.indexOf('/s/') + 3);
    const real = await post(form(sheet('seller-c-7.xlsx'), '../../etc/passwd.xlsx', { seller: 'SOMEONE-ELSE' }), { Authorization: `Bearer ${token}` });
    expect(real.status).toBe(200);
    expect(real.body).toMatchObject({ sellerId: 'API2', rows: 7, enqueued: 7, alreadyUploaded: false, file: 'passwd.xlsx' });
    const again = JSON.parse((await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'API2', '--json'], s.stage.env)).stdout);
    expect(again).toMatchObject({ uploadId: real.body.uploadId, enqueued: 0, alreadyUploaded: true });
    // a check of that file says it was uploaded before, for its seller only; the CLI's dry run reads no Redis
    const checkAgain = await post(form(sheet('seller-c-7.xlsx'), 'c.xlsx', { seller: 'API2', dryRun: '1' }));
    expect(checkAgain.body).toMatchObject({ uploadId: real.body.uploadId, dryRun: true, enqueued: 0, alreadyUploaded: true, valid: 7 });
    expect((await post(form(sheet('seller-c-7.xlsx'), 'c.xlsx', { seller: 'API3', dryRun: '1' }))).body).toMatchObject({ dryRun: true, alreadyUploaded: false });

    const operatorWithoutSeller = await post(form(sheet('seller-c-7.xlsx'), 'x.xlsx'));
    expect(operatorWithoutSeller.status).toBe(422);
    expect(operatorWithoutSeller.body.error).toMatch(/seller/);
  });

  it("ends a seller's event stream when the link expires", async () => {
    const link = s.sellerLink('API6', Date.now() + 2500);
    const token = link.slice(link.indexOf('/s/') + 3);
    const started = Date.now();
    const res = await fetch(`${s.url}/api/events?token=${token}`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let events = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      events += (new TextDecoder().decode(value).match(/^event: status$/gm) ?? []).length;
    }
    expect(events).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(6000);
    expect((await fetch(`${s.url}/api/events?token=${token}`)).status).toBe(403);
  });

  it('refuses a file that is not a sheet with 422 and one sentence', async () => {
    for (const [bytes, name] of [[Buffer.from('%PDF-1.4 not a sheet'), 'report.xlsx'], [Buffer.from('<html><body>hi</body></html>'), 'page.xlsx'], [Buffer.alloc(0), 'empty.xlsx']] as const) {
      const r = await post(form(bytes, name, { seller: 'API3' }));
      expect(r.status).toBe(422);
      expect(Object.keys(r.body)).toEqual(['error']);
      expect(String(r.body.error)).not.toMatch(/\n|at .*\.js/);
    }
    const notMultipart = await post('just text', { ...ops, 'Content-Type': 'text/plain' });
    expect(notMultipart.status).toBe(422);
  });

  it('413 past CONSOLE_MAX_UPLOAD_BYTES: declared too large is refused before reading, and a stream is cut at the limit', async () => {
    // on a connection of its own: the server closes it rather than read the rest
    const declared = new Request(`${s.url}/api/uploads`, { method: 'POST', body: form(Buffer.alloc(MAX + 1000, 1), 'big.xlsx', { seller: 'API4' }) });
    const bytes = Buffer.from(await declared.arrayBuffer());
    const url = new URL(s.url);
    const postBig = (headers: Record<string, string>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({
        host: url.hostname, port: url.port, path: '/api/uploads', method: 'POST', agent: false,
        headers: { ...headers, 'Content-Type': declared.headers.get('content-type')!, 'Content-Length': String(bytes.length) },
      }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(bytes);
    });
    const big = await postBig(ops);
    expect(big.status).toBe(413);
    expect(Object.keys(JSON.parse(big.body))).toEqual(['error']);
    // without a token, the answer is who may upload, not how much
    const stranger = await postBig({});
    expect(stranger.status).toBe(401);
    expect(JSON.parse(stranger.body).error).toMatch(/^sign in/);

    // chunked, no length: the answer comes while the client is still sending, long before 10 MB
    const result = await new Promise<{ status: number; sentWhenAnswered: number }>((resolve, reject) => {
      let sent = 0;
      let done = false;
      const req = http.request({
        host: url.hostname, port: url.port, path: '/api/uploads', method: 'POST', agent: false,
        headers: { ...ops, 'Content-Type': 'multipart/form-data; boundary=xyz', 'Transfer-Encoding': 'chunked' },
      }, (res) => {
        done = true;
        resolve({ status: res.statusCode ?? 0, sentWhenAnswered: sent });
        res.resume();
        req.destroy();
      });
      req.on('error', (err) => { if (!done) reject(err); });
      const chunk = Buffer.alloc(16_384, 65);
      const pump = () => {
        if (done) return;
        if (sent >= 10_000_000) { req.end(); return; }
        sent += chunk.length;
        req.write(chunk, () => setTimeout(pump, 1));
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(result.sentWhenAnswered).toBeLessThan(10_000_000);
  });

  it('refuses a cross-site write even with the operator cookie, and takes a same-origin one', async () => {
    const login = await fetch(`${s.url}/ops?token=${OPS_TOKEN}`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/ops');
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).not.toContain(OPS_TOKEN);
    const cookie = setCookie.split(';')[0]!;
    const body = () => form(sheet('seller-c-7.xlsx'), 'c.xlsx', { seller: 'API5', dryRun: '1' });
    expect((await post(body(), { Cookie: cookie, Origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(body(), { Cookie: cookie, Origin: s.url, 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    expect((await post(body(), { Cookie: cookie })).status).toBe(403); // a cookie alone, no Origin
    expect((await post(body(), { Cookie: cookie, Origin: s.url })).status).toBe(200);
    expect((await fetch(`${s.url}/ops?token=wrong-token`)).status).toBe(403);
  });

  it('steers sellers as status shows them: a pause before any upload, one seller resumed while everyone is paused; a bad body is 400', async () => {
    const json = { ...ops, 'Content-Type': 'application/json' };
    const pause = await fetch(`${s.url}/api/sellers/FRESH1/pause`, { method: 'POST', headers: json, body: '{"reason":"kyc pending"}' });
    expect(pause.status).toBe(200);
    expect(await pause.json()).toMatchObject({ sellerId: 'FRESH1', paused: { reason: 'kyc pending', by: 'operator' } });
    const listed = (await (await fetch(`${s.url}/api/uploads`, { headers: ops })).json()) as { sellers: Array<{ sellerId: string; paused: unknown }> };
    expect(listed.sellers.find((x) => x.sellerId === 'FRESH1')?.paused).toMatchObject({ reason: 'kyc pending' });
    for (const body of ['{bad json', '{"reason":5}', '[1]']) {
      const bad = await fetch(`${s.url}/api/sellers/FRESH1/pause`, { method: 'POST', headers: json, body });
      expect(bad.status, body).toBe(400);
      expect(Object.keys(await bad.json())).toEqual(['error']);
    }
    expect((await fetch(`${s.url}/api/sellers/FRESH1/resume`, { method: 'POST', headers: ops })).status).toBe(200);

    expect((await fetch(`${s.url}/api/pause-all`, { method: 'POST', headers: json, body: '{"reason":"maintenance"}' })).status).toBe(200);
    try {
      const one = await fetch(`${s.url}/api/sellers/FRESH2/resume`, { method: 'POST', headers: ops });
      expect(await one.json()).toMatchObject({ sellerId: 'FRESH2', paused: null });
      const view = (await (await fetch(`${s.url}/api/uploads`, { headers: ops })).json()) as { sellers: Array<{ sellerId: string; paused: unknown }> };
      expect(view.sellers.length).toBeGreaterThan(0);
      for (const seller of view.sellers) expect(seller.paused, seller.sellerId).toMatchObject({ reason: 'maintenance' });
    } finally {
      expect((await fetch(`${s.url}/api/resume-all`, { method: 'POST', headers: ops })).status).toBe(200);
    }
  });

  it('answers pause and resume with the whole seller as `status --json` shows it, with no upload or pause before', async () => {
    const json = { ...ops, 'Content-Type': 'application/json' };
    const resumed = await fetch(`${s.url}/api/sellers/IDLE1/resume`, { method: 'POST', headers: ops });
    expect(resumed.status).toBe(200);
    const idle = (await resumed.json()) as Record<string, unknown>;
    expect(idle).toMatchObject({ sellerId: 'IDLE1', paused: null, limit: 10, windowMs: 2000, nextPermitInMs: 0, ruleSource: 'config' });

    const paused = (await (await fetch(`${s.url}/api/sellers/IDLE1/pause`, { method: 'POST', headers: json, body: '{"reason":"audit"}' })).json()) as Record<string, unknown>;
    expect(paused).toMatchObject({ sellerId: 'IDLE1', paused: { reason: 'audit', by: 'operator' } });
    // while paused, status lists the seller: the shape every answer must have
    const status = JSON.parse((await runCli(['status', '--seller', 'IDLE1', '--json'], s.stage.env)).stdout) as { sellers: Array<Record<string, unknown>> };
    const listed = status.sellers.find((x) => x.sellerId === 'IDLE1')!;
    const again = (await (await fetch(`${s.url}/api/sellers/IDLE1/resume`, { method: 'POST', headers: ops })).json()) as Record<string, unknown>;
    expect(again).toMatchObject({ sellerId: 'IDLE1', paused: null });
    for (const answer of [idle, paused, again]) expect(Object.keys(answer).sort()).toEqual(Object.keys(listed).sort());
    expect(paused).toEqual(listed);
  });

  it('refuses a link whose signature is spelled otherwise in its last character, whatever that character', async () => {
    const link = s.sellerLink('TAMPER1');
    expect((await fetch(link)).status).toBe(200);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (const last of alphabet.replace(link.at(-1)!, '')) {
      const tampered = `${link.slice(0, -1)}${last}`;
      const token = tampered.slice(tampered.indexOf('/s/') + 3);
      const page = await fetch(tampered);
      expect(page.status, last).toBe(403);
      expect(await page.text()).not.toContain('TAMPER1');
      expect((await fetch(`${s.url}/api/uploads?token=${token}`)).status, last).toBe(403);
    }
  });

  it("answers another seller's report as it answers an unknown one, and keeps no page in a cache", async () => {
    const mine = await post(form(sheet('seller-c-7.xlsx'), 'c.xlsx', { seller: 'REP1' }));
    expect(mine.status).toBe(200);
    const link = s.sellerLink('REP2');
    const token = link.slice(link.indexOf('/s/') + 3);
    const others = await fetch(`${s.url}/api/uploads/${String(mine.body.uploadId)}/report?token=${token}`);
    const unknown = await fetch(`${s.url}/api/uploads/0123456789abcdef01234567/report?token=${token}`);
    expect([others.status, unknown.status]).toEqual([404, 404]);
    const [a, b] = [(await others.json()) as { error: string }, (await unknown.json()) as { error: string }];
    expect(a.error.replace(String(mine.body.uploadId), 'ID')).toBe(b.error.replace('0123456789abcdef01234567', 'ID'));
    expect(a.error).not.toContain('bulk-register');
    expect((await fetch(link)).headers.get('cache-control')).toBe('no-store');
    expect((await fetch(`${s.url}/ops`, { headers: ops })).headers.get('cache-control')).toBe('no-store');
  });

  it('refuses to start on a non-loopback host with no operator token, and to sign without a secret', async () => {
    const env = baseEnv({ REDIS_URL: s.stage.redis.url, CONSOLE_HOST: '0.0.0.0', CONSOLE_PORT: '0' });
    const r = await runCli(['console'], env, 20_000);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('CONSOLE_OPERATOR_TOKEN is not set');
    const link = await runCli(['console', 'link', '--seller', 'S1'], baseEnv({}), 20_000);
    expect(link.code).toBe(1);
    expect(link.stderr).toContain('CONSOLE_SECRET is not set');
    const signed = await runCli(['console', 'link', '--seller', 'S1', '--ttl', '2h'], baseEnv({ CONSOLE_SECRET: SECRET, CONSOLE_PUBLIC_URL: 'https://console.example.com/' }), 20_000);
    expect(signed.code).toBe(0);
    expect(signed.stdout).toMatch(/^https:\/\/console\.example\.com\/s\/S1\.\d+\.[A-Za-z0-9_-]{43}\n$/);
    const badSecret = await runCli(['console', 'link', '--seller', 'S1'], baseEnv({ CONSOLE_SECRET: 'has space' }), 20_000);
    expect(badSecret.code).toBe(1);
    expect(badSecret.stderr).not.toContain('has space'); // a secret is never echoed
  });
});
