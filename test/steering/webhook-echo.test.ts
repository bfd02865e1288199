/**
 * `bulk-register webhook-echo`, the receiver for demos and trials (and the verifying
 * receiver it shares with the webhook tests and the chaos trial), as a real process:
 * a request signed with the secret prints its event and gets 204; a tampered one,
 * or one signed with another key, prints verified false and gets 401; a port taken
 * and a missing secret are one sentence each, with no stack and no secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { baseEnv, runCli, startCli, type Running } from '../helpers/cli.js';
import { freePort } from '../helpers/redis-server.js';

const SECRET = `whsec_${Buffer.from('bulk-register echo test key 0123456789').toString('base64')}`;
const OTHER = `whsec_${Buffer.from('some other key, not the pool one').toString('base64')}`;
const env = baseEnv({ UPLOAD_WEBHOOK_SECRET: SECRET });

let port: number;
let echo: Running;

/** POSTs `body` signed with `secret` as the pool signs (id, timestamp, signature headers); the status. */
async function post(body: string, secret: string, tamper?: (b: string) => string): Promise<number> {
  const id = `msg_${Math.random().toString(36).slice(2)}`;
  const at = new Date();
  const signature = new Webhook(secret).sign(id, at, body);
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature },
    body: tamper ? tamper(body) : body,
  });
  return res.status;
}

const lines = () => echo.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  port = await freePort();
  echo = startCli(['webhook-echo', '--port', String(port)], env);
  await echo.waitFor(/webhook-echo listening on/);
});

afterAll(async () => {
  await echo?.stop();
});

describe('webhook-echo', () => {
  it('prints a verified event and answers 204; a tampered body or another key: verified false, 401', async () => {
    const event = { type: 'upload.finished', timestamp: new Date().toISOString(), data: { upload: { uploadId: 'u1', done: true } } };
    expect(await post(JSON.stringify(event), SECRET)).toBe(204);
    expect(await post(JSON.stringify(event), SECRET, (b) => b.replace('u1', 'u2'))).toBe(401);
    expect(await post(JSON.stringify(event), OTHER)).toBe(401);
    await echo.waitFor(/"verified":false[^\n]*\n[^\n]*"verified":false/);
    const [ok, tampered, otherKey] = lines();
    expect(ok).toMatchObject({ verified: true, type: 'upload.finished', data: { upload: { uploadId: 'u1' } } });
    expect(typeof ok!.webhookId).toBe('string');
    expect(tampered).toEqual({ webhookId: expect.any(String), verified: false });
    expect(otherKey).toEqual({ webhookId: expect.any(String), verified: false });
    expect(echo.output()).not.toContain(SECRET);
  });

  it('a port taken: one sentence, exit 1, no stack and no secret', async () => {
    const taken: Server = createServer();
    const busy = await freePort();
    await new Promise<void>((r) => taken.listen(busy, '127.0.0.1', () => r()));
    try {
      const res = await runCli(['webhook-echo', '--port', String(busy)], env, 20_000);
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toBe(`Port ${busy} on 127.0.0.1 is taken: pick a free one with --port.`);
      expect(res.stderr + res.stdout).not.toContain(SECRET);
    } finally {
      taken.close();
    }
  });

  it('without UPLOAD_WEBHOOK_SECRET: one sentence, no stack', async () => {
    const res = await runCli(['webhook-echo', '--port', '0'], baseEnv({}), 20_000);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/^UPLOAD_WEBHOOK_SECRET is missing/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
