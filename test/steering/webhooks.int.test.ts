/**
 * Signed notifications with real worker pools: every request verifies with the
 * `standardwebhooks` library a receiver would use; a receiver that is down and
 * then answers 500 gets every event in the end, under one stable webhook-id
 * each, across a pool killed and started again; a pool killed right as an
 * upload finishes still tells of it (in a loop: this is timing); exactly one
 * upload.finished id per upload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/redis-server.js';
import { runCli, type Running } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { until } from '../helpers/until.js';
import { listenLocal, verifyingReceiver } from '../../src/steering/webhook-receiver.js';

const SECRET = `whsec_${Buffer.from('bulk-register test webhook key 0123456789').toString('base64')}`;
const dir = mkdtempSync(join(tmpdir(), 'br-webhooks-'));
let stage: Stage;
let receiverPort: number;

interface Received { id: string; status: number; verified: boolean; body: { type: string; timestamp: string; data: Record<string, unknown> } }

/** A receiver that verifies each request; the first `failFirst` answers are 500. */
function startReceiver(failFirst: number) {
  const got: Received[] = [];
  let failed = 0;
  const server = verifyingReceiver(SECRET, ({ id, verified, event }) => {
    const status = failed < failFirst ? 500 : 204;
    if (status === 500) failed++;
    got.push({ id: String(id), status, verified, body: event ?? { type: 'not verified', timestamp: '', data: {} } });
    return status;
  });
  return {
    got,
    delivered: () => got.filter((g) => g.status === 204),
    listen: () => listenLocal(server, receiverPort),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function upload(seller: string, rows: number): Promise<string> {
  const file = join(dir, `${seller}-${rows}.xlsx`);
  writeFileSync(file, await buildProductSheet(sampleProducts(seller, rows)));
  const res = await runCli(['upload', file, '--seller', seller, '--json'], stage.env);
  return JSON.parse(res.stdout).uploadId;
}

const done = async (uploadId: string) => JSON.parse((await runCli(['status', '--upload', uploadId, '--json'], stage.env)).stdout).uploads[0]?.done === true;

beforeAll(async () => {
  receiverPort = await freePort();
  stage = await startStage({
    RATE_LIMIT_MAX: '50', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', QUEUE_PREFIX: '{hooks}',
    UPLOAD_WEBHOOK_URL: `http://127.0.0.1:${receiverPort}/hooks?key=url-secret-abc`, UPLOAD_WEBHOOK_SECRET: SECRET,
    // retries after 0.5 s, 1 s, 2 s ... rather than 5 s, 10 s, 20 s: the same path, a shorter wait
    UPLOAD_WEBHOOK_RETRY_MS: '500',
  }, { MOCK_LATENCY_MS: '5-20' });
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('signed notifications', () => {
  it('delivers every event, signed, under one id each, through a receiver that is down then failing and a pool killed in between', async () => {
    let pool: Running = stage.pool(2);
    await pool.waitFor(/worker process ready/);
    const u1 = await upload('W1', 20);
    const pausedAt = Date.now();
    expect((await runCli(['pause', '--seller', 'W2', '--reason', 'maintenance'], stage.env)).code).toBe(0);
    const pauseReturned = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    const resumedAt = Date.now();
    expect((await runCli(['resume', '--seller', 'W2'], stage.env)).code).toBe(0);
    const resumeReturned = Date.now();
    // a pause lifted at once, and a seller resumed on its own while everyone stays paused: each is told
    for (const args of [['pause', '--seller', 'W1', '--reason', 'quick look'], ['resume', '--seller', 'W1'], ['pause', '--all', '--reason', 'all hands'], ['resume', '--seller', 'W4'], ['resume', '--all']]) {
      expect((await runCli(args, stage.env)).code, args.join(' ')).toBe(0);
    }
    await until('W1 done', () => done(u1));
    await new Promise((r) => setTimeout(r, 2500)); // the events are in the outbox; the receiver is not up
    await pool.stop('SIGKILL');
    const firstPoolOutput = pool.output();

    const receiver = startReceiver(2);
    await receiver.listen();
    pool = stage.pool(2);
    await until('eight events delivered', () => receiver.delivered().length >= 8, 90_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.got.every((g) => g.verified)).toBe(true);
    const byType = (type: string) => receiver.delivered().filter((g) => g.body.type === type);
    expect(byType('upload.finished')).toHaveLength(1);
    expect(byType('upload.finished')[0]!.body.data.upload).toMatchObject({ uploadId: u1, sellerId: 'W1', total: 20, registered: 20, done: true });
    // the outbox delivers several at once: events are found by seller, not by their order
    const sellerOf = (type: string, sellerId: string) => byType(type).map((g) => g.body.data.seller as Record<string, unknown>).find((x) => x.sellerId === sellerId);
    expect(sellerOf('seller.paused', 'W2')).toMatchObject({ sellerId: 'W2', paused: { reason: 'maintenance', by: 'operator' } });
    expect(sellerOf('seller.resumed', 'W2')).toMatchObject({ sellerId: 'W2', paused: null });
    // a seller with no upload, as status --json shows it too
    expect(sellerOf('seller.resumed', 'W2')).toHaveProperty('ruleSource', 'config');
    // each event is timed when it happened, not when the pool (down meanwhile) found it
    const timeOf = (type: string, sellerId: string) => Date.parse(byType(type).find((g) => (g.body.data.seller as { sellerId: string }).sellerId === sellerId)!.body.timestamp);
    expect(timeOf('seller.paused', 'W2')).toBeGreaterThanOrEqual(pausedAt);
    expect(timeOf('seller.paused', 'W2')).toBeLessThanOrEqual(pauseReturned);
    expect(timeOf('seller.resumed', 'W2')).toBeGreaterThanOrEqual(resumedAt);
    expect(timeOf('seller.resumed', 'W2')).toBeLessThanOrEqual(resumeReturned);
    // the pool's log says whom each event is about
    expect(firstPoolOutput).toMatch(/"sellerId":"W2","reason":"maintenance","by":"operator","webhookId":"msg_seller\.paused-W2-\d+","type":"seller\.paused"/);
    const told = (type: string) => byType(type).map((g) => (g.body.data.seller as { sellerId: string }).sellerId).sort();
    expect(told('seller.paused')).toEqual(['*', 'W1', 'W2']);
    expect(told('seller.resumed')).toEqual(['*', 'W1', 'W2', 'W4']);
    // a seller with uploads, as status --json shows it, with the pause of the event
    expect(sellerOf('seller.paused', 'W1')).toMatchObject({ ruleSource: 'config', paused: { reason: 'quick look', by: 'operator' } });
    expect(sellerOf('seller.paused', 'W1')).toHaveProperty('nextPermitInMs');
    // the 500s were retried under the same id
    const failedIds = receiver.got.filter((g) => g.status === 500).map((g) => g.id);
    expect(failedIds).toHaveLength(2);
    for (const id of failedIds) expect(receiver.delivered().map((g) => g.id)).toContain(id);
    expect(new Set(receiver.delivered().map((g) => g.id)).size).toBe(receiver.delivered().length);
    expect(pool.output()).not.toContain('url-secret-abc');

    // killed right as an upload finishes: the event still comes, once
    for (let round = 0; round < 3; round++) {
      const u = await upload(`K${round}`, 5);
      await until(`K${round} done`, () => done(u), 30_000);
      await pool.stop('SIGKILL');
      pool = stage.pool(2);
      await until(`K${round} told`, () => receiver.delivered().some((g) => (g.body.data.upload as { uploadId?: string } | undefined)?.uploadId === u), 60_000);
    }
    await new Promise((r) => setTimeout(r, 2000));
    const finishedIds = receiver.delivered().filter((g) => g.body.type === 'upload.finished').map((g) => g.id);
    expect(finishedIds).toHaveLength(4);
    expect(new Set(finishedIds).size).toBe(4);
    await pool.stop('SIGKILL');
    await receiver.close();
  }, 240_000);

  it('refuses to start with a malformed secret, in one sentence that does not show it', async () => {
    const res = await runCli(['workers', '--processes', '1'], { ...stage.env, UPLOAD_WEBHOOK_SECRET: 'not-a-whsec-value' }, 30_000);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('UPLOAD_WEBHOOK_SECRET=(hidden) is invalid: expected whsec_ followed by a base64 key of at least 16 bytes, as the Standard Webhooks specification writes it.\n');
  });
});
