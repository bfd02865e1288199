/**
 * The pool against a marketplace with its own sign-in (examples/marketplace-adapter.mjs
 * and the stand-in src/mock-api/marketplace.ts), with real worker processes and a
 * private redis-server: tokens shared by 16 processes, expiry mid-run, a secret
 * rotated (the seller paused, then resumed by the credentials file), a rule lowered
 * while a seller sent nothing (idle, paused, or new to the pool), a rule lowered
 * and raised mid-run, extra columns, adapter faults, and no secret in any output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { baseEnv, runCli, startCli, type Running, poolReady } from '../helpers/cli.js';
import { freePort, startRedis, type TestRedis } from '../helpers/redis-server.js';
import { MockMarketplace } from '../../src/mock-api/marketplace.js';
import { buildSheet, ENGLISH_HEADERS, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { loadConfig } from '../../src/config.js';
import { readStatus, statusJson } from '../../src/progress/status.js';
import { defineCommands } from '../../src/lua-commands.js';
import type { RedisClient } from '../../src/redis.js';
import { until } from '../helpers/until.js';

const LIMIT = 20;
const WINDOW = 1000;
const TOKEN_LIFE_MS = 3000;
const dir = mkdtempSync(join(tmpdir(), 'br-marketplace-'));
const secrets: Record<string, string> = { S1: 'sec-S1-0a1b2c3d4e', S2: 'sec-S2-5f6a7b8c9d', S3: 'sec-S3-e0f1a2b3c4', S4: 'sec-S4-d5e6f7a8b9', S5: 'sec-S5-1c2d3e4f5a', S6: 'sec-S6-9e8d7c6b5a', S7: 'sec-S7-7a6b5c4d3e' };
const clients = Object.fromEntries(Object.entries(secrets).map(([s, secret]) => [s, { clientId: `client-${s}`, clientSecret: secret }]));
const credentialsFile = join(dir, 'credentials.json');
const writeCredentials = (entries: Record<string, { clientId: string; clientSecret: string }>) => {
  // as an operator's tooling would: write aside, then rename into place
  writeFileSync(`${credentialsFile}.tmp`, JSON.stringify(entries, null, 2));
  renameSync(`${credentialsFile}.tmp`, credentialsFile);
};

// the example adapter, with two faults of the kind an adapter author makes
const adapterFile = join(dir, 'faulty-adapter.mjs');
writeFileSync(adapterFile, `
import base from ${JSON.stringify(join(PACKAGE_ROOT, 'examples', 'marketplace-adapter.mjs'))};
export default {
  ...base,
  // the pool learns that the marketplace announces rules from its answers (the adapter's own
  // announcesRules: test/marketplace/first-window.int.test.ts)
  announcesRules: false,
  request(call) {
    if (call.product.sku.startsWith('BOOM')) throw new Error('cannot map ' + call.product.sku + ' with ' + JSON.stringify(call.credentials));
    if (call.product.sku.startsWith('JUNK')) return { to: 'nowhere' };
    return base.request(call);
  },
};
`);

let redis: TestRedis;
let market: MockMarketplace;
let env: NodeJS.ProcessEnv;
let pool: Running;
const outputs: string[] = [];
const tokensSeen = new Set<string>();
let tokenWatch: NodeJS.Timeout;
let reader: RedisClient;

async function upload(sellerId: string, sheet: Buffer, name: string) {
  const file = join(dir, name);
  writeFileSync(file, sheet);
  const res = await runCli(['upload', file, '--seller', sellerId, '--json'], env);
  outputs.push(res.stdout, res.stderr);
  return { code: res.code, json: JSON.parse(res.stdout) as { uploadId: string; enqueued: number; warnings: string[] } };
}

type Status = { uploads: Array<Record<string, unknown>>; sellers: Array<Record<string, unknown>> };

/** status --json, read in-process (cheap enough to poll). */
async function status(): Promise<Status> {
  return statusJson(await readStatus(reader, loadConfig(env))) as unknown as Status;
}

/** status --json and status, as the CLI prints them (kept for the leak check). */
async function cliStatus(): Promise<Status> {
  const res = await runCli(['status', '--json'], env);
  const text = await runCli(['status'], env);
  outputs.push(res.stdout, res.stderr, text.stdout, text.stderr);
  return JSON.parse(res.stdout);
}


const sellerOf = (s: Status, id: string) => s.sellers.find((x) => x.sellerId === id)!;
const uploadOf = (s: Status, id: string) => s.uploads.find((x) => x.uploadId === id)!;

beforeAll(async () => {
  redis = await startRedis();
  market = new MockMarketplace({ clients, rule: { max: LIMIT, windowMs: WINDOW }, tokenLifetimeMs: TOKEN_LIFE_MS, latencyMs: { min: 5, max: 40 }, tokenLatencyMs: { min: 30, max: 60 }, tokenRule: { max: 30, windowMs: 60_000 }, keepBodies: 500 });
  const port = await market.listen(0);
  writeCredentials(clients);
  env = baseEnv({
    REDIS_URL: redis.url, REGISTRATION_API_URL: `http://127.0.0.1:${port}`, QUEUE_PREFIX: '{mkt}',
    RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW), RATE_LIMIT_GUARD_MS: '100',
    REGISTRATION_ADAPTER: adapterFile, SELLER_CREDENTIALS_FILE: credentialsFile, API_TIMEOUT_MS: '3000', SHUTDOWN_TIMEOUT_MS: '5000',
  });
  reader = defineCommands(redis.client());
  // every token the pool keeps, for the leak check
  const watcher = redis.client();
  tokenWatch = setInterval(() => {
    for (const s of Object.keys(secrets)) void watcher.hget(`mkt:tok:{${s}}`, 'token').then((t) => t && tokensSeen.add(t), () => undefined);
  }, 100);
  pool = startCli(['workers', '--processes', '16'], env);
  await poolReady(pool, 2, 60_000);
}, 120_000);

afterAll(async () => {
  clearInterval(tokenWatch);
  await pool?.stop('SIGKILL');
  await market?.close();
  await redis?.stop();
});

describe('a marketplace with its own sign-in, through an adapter', () => {
  let s1: string, s2: string, s3: string, s4: string;
  let started = 0;

  it('shares one token per seller across 16 processes, renews it before it expires, and keeps the extra columns', async () => {
    started = Date.now();
    const extra = await buildSheet([...ENGLISH_HEADERS, 'origin', 'shipping fee'], productRows(sampleProducts('S3', 200)).map((r, i) => [...r, i % 2 ? 'KR' : 'CN', i % 5 ? String(2500 + i) : '']));
    const up3 = await upload('S3', extra, 's3.xlsx');
    expect(up3.code).toBe(0);
    s3 = up3.json.uploadId;
    // not the built-in adapter: the extra columns are sent, no warning about them
    expect(up3.json.warnings.join(' ')).not.toMatch(/not sent/);
    await until('S3 done', async () => uploadOf(await status(), s3).done === true, 90_000);
    const runMs = Date.now() - started;
    const st = market.stats().sellers.S3!;
    expect(st.registered).toBe(200);
    expect(st.tooMany).toBe(0);
    // at most one token request per seller in flight across the pool, and few of them
    expect(st.concurrentTokenRequestsMax).toBe(1);
    expect(st.tokenRequests).toBeLessThanOrEqual(Math.ceil(runMs / (TOKEN_LIFE_MS / 2)) + 3);
    expect(st.expiredTokenCalls).toBeLessThanOrEqual(2);
    // the sheet's own columns reached the marketplace as the adapter put them
    const bodies = st.recentBodies as Array<{ sellerProductCode: string; extras?: Record<string, string> }>;
    const first = bodies.find((b) => b.sellerProductCode === 'S3-0002')!;
    expect(first.extras).toEqual({ origin: 'KR', 'shipping fee': '2501' });
    expect(bodies.find((b) => b.sellerProductCode === 'S3-0001')!.extras).toEqual({ origin: 'CN' });
    console.log(`token requests for S3 over ${runMs} ms with a ${TOKEN_LIFE_MS} ms token: ${st.tokenRequests}; expired-token calls ${st.expiredTokenCalls}`);
  }, 120_000);

  it('pauses a seller whose secret was rotated, holds its rows without failing them, and resumes within 5 s of the new secret in the file', async () => {
    s1 = (await upload('S1', await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts('S1', 300))), 's1.xlsx')).json.uploadId;
    s2 = (await upload('S2', await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts('S2', 400))), 's2.xlsx')).json.uploadId;
    await until('S1 under way', async () => market.stats().sellers.S1!.registered >= 40, 30_000);
    market.rotateSecret('S1', 'sec-S1-rotated-9z8y7x');
    const pausedAt = await until('S1 paused', async () => {
      const s = await status();
      const p = sellerOf(s, 'S1').paused as { by: string; reason: string } | null;
      return p ? { s, p } : undefined;
    }, 30_000);
    expect(pausedAt.p.by).toBe('credentials');
    expect(pausedAt.p.reason).toMatch(/^credentials rejected: /);
    expect(uploadOf(pausedAt.s, s1).state).toBe('paused');
    // a call already granted may still leave within 200 ms of the pause (cli.md): counted from after that
    await new Promise((r) => setTimeout(r, 300));
    const refusedAtPause = market.stats().sellers.S1!;
    // S2 goes on meanwhile
    const s2Before = market.stats().sellers.S2!.registered;
    await new Promise((r) => setTimeout(r, 2500));
    const held = market.stats().sellers.S1!;
    expect(held.registered).toBe(refusedAtPause.registered);
    expect(held.invalidTokenCalls + held.expiredTokenCalls).toBe(refusedAtPause.invalidTokenCalls + refusedAtPause.expiredTokenCalls);
    expect(market.stats().sellers.S2!.registered).toBeGreaterThan(s2Before + 20);
    const during = await cliStatus();
    expect(uploadOf(during, s1)).toMatchObject({ failed: 0, done: false, state: 'paused' });
    expect(outputs.at(-2)).toMatch(/seller S1 .*paused: credentials rejected: /);

    writeCredentials({ ...clients, S1: { clientId: 'client-S1', clientSecret: 'sec-S1-rotated-9z8y7x' } });
    const changedAt = Date.now();
    await until('S1 resumed', async () => sellerOf(await status(), 'S1').paused === null, 10_000);
    const resumeMs = Date.now() - changedAt;
    expect(resumeMs).toBeLessThanOrEqual(5000);
    await until('S1 registering again', async () => market.stats().sellers.S1!.registered > held.registered, 10_000);
    console.log(`S1 resumed ${resumeMs} ms after the credentials file changed; refused calls after the rotation: ${held.invalidTokenCalls}`);
    // one pause and one resume, told once each: a call that left with the old secret and was refused
    // after the file changed (its process had not read the file yet) does not pause the seller again
    await new Promise((r) => setTimeout(r, 6000));
    const told = pool.output().split('\n').filter((l) => l.includes('"sellerId":"S1"') && l.includes('"msg":"notification due"'));
    expect(told.map((l) => /"type":"([a-z.]+)"/.exec(l)?.[1])).toEqual(['seller.paused', 'seller.resumed']);
  }, 120_000);

  it('follows a rule the marketplace lowers a window before enforcing it, and one it raises, with no 429', async () => {
    market.setRule('S2', { max: 5, windowMs: 1000 }, { enforceAfterMs: 1500 });
    await until('S2 under the lower rule', async () => {
      const s = sellerOf(await status(), 'S2');
      return s.ruleSource === 'api' && s.limit === 5;
    }, 10_000);
    await new Promise((r) => setTimeout(r, 3000));
    market.setRule('S2', { max: 30, windowMs: 1000 });
    await until('S2 under the higher rule', async () => sellerOf(await status(), 'S2').limit === 30, 10_000);
    await until('every upload done', async () => (await status()).uploads.every((u) => u.done === true), 120_000);
    const stats = market.stats().sellers;
    for (const s of ['S1', 'S2', 'S3']) expect(stats[s]!.tooMany, s).toBe(0);
    const end = await status();
    expect(uploadOf(end, s1)).toMatchObject({ registered: 300, failed: 0, pending: 0 });
    expect(uploadOf(end, s2)).toMatchObject({ registered: 400, failed: 0, pending: 0 });
    expect(stats.S1!.registered).toBe(300);
    expect(stats.S2!.registered).toBe(400);
    await cliStatus();
  }, 180_000);

  it("brings forward the rows deferred under the configured rule once the marketplace announces a higher one", async () => {
    // 160 rows under the configured 20 per 1.1 s are deferred over 8 windows, the last due about 7.4 s
    // after the upload; the marketplace allows this seller 80 per second, and says so in its first answer
    market.setRule('S6', { max: 80, windowMs: WINDOW });
    const t0 = Date.now();
    const up = await upload('S6', await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts('S6', 160))), 's6.xlsx');
    expect(up.code).toBe(0);
    await until('S6 done', async () => uploadOf(await status(), up.json.uploadId).done === true, 30_000);
    const doneMs = Date.now() - t0;
    console.log(`S6: 160 rows done ${doneMs} ms after the upload began`);
    expect(doneMs).toBeLessThan(5000);
    expect(market.stats().sellers.S6).toMatchObject({ registered: 160, tooMany: 0 });
    expect(sellerOf(await status(), 'S6')).toMatchObject({ ruleSource: 'api', limit: 80 });
    // the rows come forward from the worker that wrote the raise (which logs it) or, when the raise
    // landed while the upload was still adding them, from the producer once they are all in the queue
    expect(pool.output()).toMatch(/"sellerId":"S6","max":80,"windowMs":1000,"msg":"the marketplace announced the seller's rule/);
  }, 60_000);

  it('learns the rule of a seller new to the pool, and one the marketplace lowered while the seller sent nothing, idle or paused, before its next burst: no 429', async () => {
    // S7 has never sent: the marketplace allows it 5 per second, below the configured 20
    market.setRule('S7', { max: 5, windowMs: WINDOW });
    const first = await upload('S7', await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts('S7', 30))), 's7.xlsx');
    await until('S7 done', async () => uploadOf(await status(), first.json.uploadId).done === true, 30_000);
    expect(market.stats().sellers.S7).toMatchObject({ registered: 30, tooMany: 0 });
    expect(sellerOf(await status(), 'S7')).toMatchObject({ ruleSource: 'api', limit: 5 });

    // S6 (80 per second, announced) has sent nothing for over a span when the marketplace lowers
    // its rule, enforced at once: the pool sends one row, learns the rule from its answer, then the rest
    market.setRule('S6', { max: 8, windowMs: WINDOW });
    const idle = await upload('S6', await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts('S6I', 40))), 's6-idle.xlsx');
    await until('S6 idle upload done', async () => uploadOf(await status(), idle.json.uploadId).done === true, 30_000);
    expect(market.stats().sellers.S6).toMatchObject({ registered: 200, tooMany: 0 });
    expect(sellerOf(await status(), 'S6')).toMatchObject({ ruleSource: 'api', limit: 8 });

    // raised, then lowered while the seller is paused
    market.setRule('S6', { max: 40, windowMs: WINDOW });
    const up = await upload('S6', await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts('S6P', 100))), 's6-paused.xlsx');
    await until('S6 under way at 40 per second', async () => market.stats().sellers.S6!.registered >= 240, 30_000);
    outputs.push((await runCli(['pause', '--seller', 'S6'], env)).stderr);
    const held = market.stats().sellers.S6!.registered;
    await new Promise((r) => setTimeout(r, 1500));
    expect(market.stats().sellers.S6!.registered - held).toBeLessThanOrEqual(40);
    // rows are left for after the resume (at 40 a second, one more window may go while the
    // pause command starts: a CI rehearsal on a loaded host saw 280 here)
    expect(market.stats().sellers.S6!.registered).toBeLessThan(300);
    market.setRule('S6', { max: 6, windowMs: WINDOW });
    outputs.push((await runCli(['resume', '--seller', 'S6'], env)).stderr);
    await until('S6 paused upload done', async () => uploadOf(await status(), up.json.uploadId).done === true, 60_000);
    expect(uploadOf(await status(), up.json.uploadId)).toMatchObject({ registered: 100, failed: 0 });
    expect(market.stats().sellers.S6).toMatchObject({ registered: 300, tooMany: 0 });
    expect(sellerOf(await status(), 'S6')).toMatchObject({ ruleSource: 'api', limit: 6 });
  }, 120_000);

  it('renews a token the marketplace revokes again after it has worked, without pausing the seller', async () => {
    const up = await upload('S5', await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts('S5', 120))), 's5.xlsx');
    const s5 = up.json.uploadId;
    let paused = false;
    const watch = setInterval(() => void status().then((s) => { paused ||= sellerOf(s, 'S5')?.paused != null; }, () => undefined), 100);
    try {
      await until('S5 under way', async () => market.stats().sellers.S5!.registered >= 20, 30_000);
      market.revokeTokens('S5');
      // a fresh token, which then works for a while
      const renewedAt = market.stats().sellers.S5!.registered;
      await until('S5 registering with its new token', async () => market.stats().sellers.S5!.registered >= renewedAt + 30, 30_000);
      market.revokeTokens('S5');
      await until('S5 done', async () => uploadOf(await status(), s5).done === true, 60_000);
    } finally {
      clearInterval(watch);
    }
    expect(paused).toBe(false);
    expect(uploadOf(await status(), s5)).toMatchObject({ registered: 120, failed: 0 });
    const st = market.stats().sellers.S5!;
    expect(st.registered).toBe(120);
    expect(st.tooMany).toBe(0);
    expect(pool.output()).not.toMatch(/"sellerId":"S5"[^\n]*seller paused/);
  }, 120_000);

  it('fails only the rows an adapter cannot handle, naming the adapter, and the process goes on', async () => {
    const rows = productRows(sampleProducts('S4', 6));
    rows[1]![0] = 'BOOM-1';
    rows[3]![0] = 'JUNK-1';
    const up = await upload('S4', await buildSheet(ENGLISH_HEADERS, rows), 's4.xlsx');
    s4 = up.json.uploadId;
    await until('S4 done', async () => uploadOf(await status(), s4).done === true, 60_000);
    const end = uploadOf(await status(), s4);
    expect(end).toMatchObject({ registered: 4, failed: 2 });
    const report = join(dir, 's4-report.xlsx');
    const r = await runCli(['report', '--upload', s4, '--out', report], env);
    outputs.push(r.stdout, r.stderr);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(report);
    const text = wb.worksheets.map((ws) => ws.getSheetValues().flat().map(String).join(' ')).join(' ');
    outputs.push(text);
    expect(text).toMatch(/adapter faulty-adapter\.mjs: request\(\) threw: cannot map BOOM-1/);
    expect(text).toMatch(/adapter faulty-adapter\.mjs: request\(\) returned a request whose method/);
    expect(pool.child.exitCode).toBeNull();
  }, 90_000);

  it('never shows a secret or a token in any output', async () => {
    const metricsPort = /"port":(\d+),"msg":"metrics listening/.exec(pool.output())?.[1];
    expect(metricsPort).toBeDefined();
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    expect(metrics).toContain('bulk_register_registrations_total');
    // the console's pages and JSON, as an operator sees them
    const consolePort = await freePort();
    const web = startCli(['console', '--port', String(consolePort)], env);
    await web.waitFor(/console listening/);
    const pages = await Promise.all(['/ops', '/api/uploads'].map((path) => fetch(`http://127.0.0.1:${consolePort}${path}`).then((r) => r.text())));
    await web.stop();
    const all = [...outputs, pool.output(), metrics, web.output(), ...pages].join('\n');
    expect(pages[1]).toContain('"ruleSource"');
    const secretsToFind = [...Object.values(secrets), 'sec-S1-rotated-9z8y7x', ...tokensSeen];
    expect(tokensSeen.size).toBeGreaterThan(3);
    for (const s of secretsToFind) expect(all.includes(s), `output holds ${s.slice(0, 6)}...`).toBe(false);
    expect(all).toMatch(/\[redacted\]/); // the faulty adapter's message carried the credentials
    expect(readFileSync(credentialsFile, 'utf8')).toContain('sec-S1-rotated');
  });
});

describe('start-up refuses what cannot work, in one sentence', () => {
  it('an adapter that cannot load, or lacks outcome, and a credentials file that is not an object', async () => {
    const bad = join(dir, 'no-outcome.mjs');
    writeFileSync(bad, 'export default { request() { return {}; } };');
    const broken = join(dir, 'broken.mjs');
    writeFileSync(broken, 'export default {;');
    const notObject = join(dir, 'creds-array.json');
    writeFileSync(notObject, '["secret-in-array-xyz"]');
    const saysSecret = join(dir, 'says-secret.mjs');
    writeFileSync(saysSecret, `throw new Error('cannot start with clientSecret ${secrets.S2}');`);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ REGISTRATION_ADAPTER: bad }, /^REGISTRATION_ADAPTER=".*no-outcome\.mjs" is invalid: its default export has no outcome function\.\n$/],
      [{ REGISTRATION_ADAPTER: broken }, /^REGISTRATION_ADAPTER=".*broken\.mjs" could not be loaded: .*\.\n$/],
      [{ REGISTRATION_ADAPTER: join(dir, 'missing.mjs') }, /^REGISTRATION_ADAPTER=".*missing\.mjs" is invalid: no such file/],
      [{ SELLER_CREDENTIALS_FILE: notObject }, /^SELLER_CREDENTIALS_FILE=".*creds-array\.json" is invalid: it is not a JSON object of sellers\.\n$/],
      [{ REGISTRATION_ADAPTER: saysSecret }, /^REGISTRATION_ADAPTER=".*says-secret\.mjs" could not be loaded: cannot start with clientSecret \[redacted\]\.\n$/],
    ];
    for (const [extra, message] of cases) {
      const res = await runCli(['workers', '--processes', '1'], { ...env, ...extra }, 30_000);
      expect(res.code, JSON.stringify(extra)).toBe(1);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).not.toContain('secret-in-array-xyz');
      expect(res.stderr).not.toContain(secrets.S2);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
  }, 90_000);
});
