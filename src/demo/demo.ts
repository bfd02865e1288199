/**
 * `npm run demo`: the whole product on one machine, in under a few minutes.
 *
 * Uses the Redis at REDIS_URL if one answers, else starts redis-server from PATH
 * on a free port in a temporary directory; starts the mock API and the worker
 * pool; uploads fixtures for three sellers under a shorter, announced rule;
 * shows per-seller progress while they are throttled; prints a summary with the
 * 429s the API saw (0); cleans up everything it started.
 *
 * DEMO_ADAPTER=example runs the same against the marketplace stand-in (its own
 * sign-in, fields and rule headers) through examples/marketplace-adapter.mjs,
 * with a credentials file written for the demo's sellers.
 */
import { join } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { MockMarketplace } from '../mock-api/marketplace.js';
import { loadConfig, type Config } from '../config.js';
import { loadSheet } from '../excel/load-sheet.js';
import { namespaceOf } from '../keys.js';
import { createLogger } from '../logger.js';
import { MockRegistrationApi } from '../mock-api/server.js';
import { FIXTURES_DIR, PACKAGE_ROOT } from '../paths.js';
import { formatDuration } from '../progress/eta.js';
import { readStatus } from '../progress/status.js';
import { bullConnection, connectChecked, createRedis } from '../redis.js';
import { freePort, redisAnswers, startRedisServer, type RedisServer } from '../dev/redis-server.js';
import { QueueSet, resolveShardPrefixes } from '../queue.js';
import { enqueueUpload } from '../upload/enqueue-upload.js';
import { WorkerPool } from '../worker/supervisor.js';
import { announcePool } from '../worker/pool-presence.js';
import { randomBytes } from 'node:crypto';
import { signSellerToken } from '../console/access.js';
import { startConsole } from '../cli/console.js';

const RULE = { max: 25, windowMs: 5000, guardMs: 200 };
const SELLERS = [
  { sellerId: 'seller-A', file: 'seller-a-150.xlsx', at: 0 },
  { sellerId: 'seller-B', file: 'seller-b-60-korean.xlsx', at: 0 },
  // uploads while seller-A is throttled: it is not held back by A's rows
  { sellerId: 'seller-C', file: 'seller-c-7.xlsx', at: 7000 },
];

const say = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function bar(fraction: number, width = 24): string {
  const full = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

async function main(): Promise<number> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => undefined);
  };
  let interrupted = false;
  process.once('SIGINT', () => { interrupted = true; });
  try {
    const base = loadConfig();
    let redisUrl = base.redisUrl;
    if (base.redisClusterNodes.length === 0 && (await redisAnswers(redisUrl))) {
      say(`Redis: using the one at ${redisUrl.replace(/\/\/[^@]*@/, '//***@')} (demo keys under their own prefix, removed at the end)`);
    } else {
      let started: RedisServer | undefined;
      try {
        started = await startRedisServer();
      } catch {
        started = undefined;
      }
      if (!started) {
        process.stderr.write(
          'No Redis answers at REDIS_URL and redis-server is not on PATH: run `docker compose up -d redis`, or install redis-server (e.g. `apt-get install redis-server`), then `npm run demo` again.\n',
        );
        return 1;
      }
      redisUrl = started.url;
      cleanups.push(() => started.stop());
      say(`Redis: started redis-server on ${redisUrl} in a temporary directory`);
    }

    const apiPort = await freePort();
    const example = process.env.DEMO_ADAPTER === 'example';
    if (process.env.DEMO_ADAPTER && !example) {
      process.stderr.write(`DEMO_ADAPTER=${JSON.stringify(process.env.DEMO_ADAPTER)} is invalid: expected example, or leave it unset for the built-in adapter.\n`);
      return 1;
    }
    // with the example adapter: a credentials file for the demo's sellers, as an operator writes one
    const demoDir = example ? mkdtempSync(join(tmpdir(), 'bulk-register-demo-')) : undefined;
    if (demoDir) cleanups.push(() => rmSync(demoDir, { recursive: true, force: true }));
    const clients = Object.fromEntries(SELLERS.map(({ sellerId }) => [sellerId, { clientId: `demo-${sellerId}`, clientSecret: randomBytes(18).toString('base64url') }]));
    if (demoDir) writeFileSync(join(demoDir, 'credentials.json'), JSON.stringify(clients, null, 2), { mode: 0o600 });
    const prefix = `{bulk-register-demo-${process.pid}}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: redisUrl,
      REDIS_CLUSTER_NODES: '',
      REGISTRATION_API_URL: `http://127.0.0.1:${apiPort}`,
      RATE_LIMIT_MAX: String(RULE.max),
      RATE_LIMIT_WINDOW_MS: String(RULE.windowMs),
      RATE_LIMIT_GUARD_MS: String(RULE.guardMs),
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: process.env.DEMO_LOG_LEVEL ?? 'error',
      LOG_PRETTY: '1',
      SHUTDOWN_TIMEOUT_MS: '10000',
      ...(demoDir ? { REGISTRATION_ADAPTER: join(PACKAGE_ROOT, 'examples', 'marketplace-adapter.mjs'), SELLER_CREDENTIALS_FILE: join(demoDir, 'credentials.json') } : {}),
    };
    const config: Config = loadConfig(env);

    // the API the workers call: registration-api.md, or the marketplace stand-in for the example adapter
    let apiSummary: () => { tooMany: number; maxInWindow: number; note: string };
    if (example) {
      const market = new MockMarketplace({ clients, rule: { max: RULE.max, windowMs: RULE.windowMs }, latencyMs: { min: 2, max: 25 }, invalidCategories: ['C0139'], tokenLifetimeMs: 20_000 });
      await market.listen(apiPort);
      cleanups.push(() => market.close());
      apiSummary = () => {
        const sellers = Object.values(market.stats().sellers);
        const tokens = sellers.reduce((n, x) => n + x.tokenRequests, 0);
        return { tooMany: sellers.reduce((n, x) => n + x.tooMany, 0), maxInWindow: Math.max(0, ...sellers.map((x) => x.maxInWindow)), note: `, token requests: ${tokens} for ${sellers.length} sellers (tokens live 20 s)` };
      };
      say(`Marketplace stand-in on port ${apiPort}, through examples/marketplace-adapter.mjs: signed token requests, its own fields, at most ${RULE.max} registrations per seller in any ${RULE.windowMs / 1000} s, announced on every answer (category C0139 unknown to it)`);
    } else {
      const api = new MockRegistrationApi({ limit: RULE.max, windowMs: RULE.windowMs, latencyMs: { min: 2, max: 25 }, invalidCategories: ['C0139'] });
      await api.listen(apiPort);
      cleanups.push(() => api.close());
      apiSummary = () => ({ tooMany: api.statsSnapshot().totals.tooMany ?? 0, maxInWindow: api.statsSnapshot().totals.maxInWindow ?? 0, note: '' });
      say(`Mock registration API on port ${apiPort}: at most ${RULE.max} registrations per seller in any ${RULE.windowMs / 1000} s (category C0139 unknown to it)`);
    }
    say(`Demo rule: ${RULE.max} per ${RULE.windowMs / 1000} s + ${RULE.guardMs} ms guard, a shorter window than production's 100 per minute, so it ends in about a minute.`);

    const log = createLogger({ level: 'warn', pretty: true, name: 'demo' });
    let ready = 0;
    let allReady: () => void = () => undefined;
    const poolReady = new Promise<void>((r) => { allReady = r; });
    const poolStarted = Date.now();
    const pool = new WorkerPool({
      processes: config.workerProcesses, env, shutdownTimeoutMs: config.shutdownTimeoutMs, log,
      onMessage: (_slot, m) => { if (m.type === 'ready' && ++ready === config.workerProcesses) allReady(); },
    });
    pool.start();
    cleanups.push(() => pool.stop());
    await Promise.race([poolReady, sleep(30_000)]);
    say(`Worker pool: ${ready} of ${config.workerProcesses} processes ready after ${((Date.now() - poolStarted) / 1000).toFixed(1)} s`);

    const redis = createRedis(config, 'cli');
    await connectChecked(redis, config);
    cleanups.push(async () => {
      // remove the demo's keys from a Redis the demo did not start
      const ns = namespaceOf(prefix);
      for (const pattern of [`${prefix}*`, `${ns}:*`]) {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      }
      redis.disconnect();
    });
    const stopAnnouncing = announcePool(redis, namespaceOf(prefix), () => ({ up: pool.ready, expected: config.workerProcesses }));
    cleanups.push(stopAnnouncing);

    // the web console on the same Redis: a person can watch the demo in a browser
    const consoleConfig = loadConfig({
      ...env,
      CONSOLE_PORT: String(await freePort()),
      CONSOLE_HOST: '127.0.0.1',
      CONSOLE_SECRET: randomBytes(24).toString('base64url'),
      CONSOLE_OPERATOR_TOKEN: '',
    });
    const web = await startConsole(consoleConfig, log);
    cleanups.push(() => web.close());
    const link = (sellerId: string) => `${web.url}/s/${signSellerToken(consoleConfig.console.secret, sellerId, Date.now() + 3_600_000)}`;
    say(`Web console (open these while the demo runs):`);
    say(`  operator page:       ${web.url}/ops`);
    for (const { sellerId } of SELLERS) say(`  ${`${sellerId}'s page:`.padEnd(20)} ${link(sellerId)}`);

    const connection = bullConnection(config, 'cli');
    const queues = QueueSet.on(connection, resolveShardPrefixes(config, redis as never));
    cleanups.push(async () => { await queues.close(); connection.disconnect(); });

    const started = Date.now();
    const uploads = SELLERS.map(async ({ sellerId, file, at }) => {
      await sleep(at);
      const sheet = await loadSheet(join(FIXTURES_DIR, file));
      const r = await enqueueUpload({ redis, queues, config, now: Date.now }, sellerId, sheet);
      say(`  + ${sellerId} uploaded ${file}: ${r.enqueued} rows enqueued (upload ${r.uploadId}) at ${((Date.now() - started) / 1000).toFixed(1)} s`);
    });

    say('');
    let last = '';
    for (;;) {
      await sleep(1000);
      if (interrupted) {
        say('Interrupted: cleaning up.');
        return 130;
      }
      const report = await readStatus(redis, config);
      const lines = report.sellers.map((s) => {
        const ups = report.uploads.filter((u) => u.sellerId === s.sellerId);
        const total = ups.reduce((n, u) => n + u.total, 0);
        const finished = ups.reduce((n, u) => n + u.registered + u.duplicate + u.failed, 0);
        const state = finished >= total ? 'done' : s.nextPermitInMs > 0 ? `throttled, next permit in ${formatDuration(s.nextPermitInMs)}` : 'sending';
        return `  ${s.sellerId.padEnd(9)} ${bar(total ? finished / total : 1)} ${String(finished).padStart(3)}/${total}  ${state}${finished < total ? `, ETA ${formatDuration(s.etaMs)}` : ''}`;
      });
      const text = `t=${String(Math.round((Date.now() - started) / 1000)).padStart(3)} s\n${lines.join('\n')}`;
      if (text !== last) say(text);
      last = text;
      const allUploaded = report.uploads.length === SELLERS.length;
      if (allUploaded && report.uploads.every((u) => u.done)) break;
      if (Date.now() - started > 240_000) {
        say('The demo is taking too long: stopping.');
        return 1;
      }
    }
    await Promise.all(uploads);

    const report = await readStatus(redis, config);
    const stats = apiSummary();
    say('');
    say('Summary');
    for (const u of report.uploads) {
      say(`  ${u.sellerId}: ${u.total} rows, registered ${u.registered}, duplicate ${u.duplicate}, failed ${u.failed}`);
      const rows = await redis.hgetall(`${namespaceOf(prefix)}:up:{${u.sellerId}}:${u.uploadId}:rows`);
      for (const [row, v] of Object.entries(rows)) {
        const r = JSON.parse(v) as { status: string; reason?: string };
        if (r.status === 'failed') say(`      row ${row} failed: ${r.reason}`);
      }
    }
    const registered = report.uploads.reduce((n, u) => n + u.registered, 0);
    const failed = report.uploads.reduce((n, u) => n + u.failed, 0);
    say(`  registered ${registered}, failed ${failed}, 429s seen by the API: ${stats.tooMany}, most registrations of one seller in any ${RULE.windowMs / 1000} s window: ${stats.maxInWindow} (limit ${RULE.max})${stats.note}`);
    say(`  took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const holdS = Number(process.env.DEMO_HOLD_S ?? 0);
    if (holdS > 0 && !interrupted) {
      say(`The console stays up for ${holdS} s (DEMO_HOLD_S): ${web.url}/ops`);
      for (let i = 0; i < holdS && !interrupted; i++) await sleep(1000);
    }
    return stats.tooMany === 0 ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`The demo failed: ${err.message}\n`);
    process.exit(1);
  },
);
