/**
 * `node dist/bench/token-storm.js`: token requests with 16 processes x 10 slots
 * calling for 20 sellers whose tokens live 5 s, for 20 s, against the marketplace
 * stand-in (examples/marketplace-adapter.mjs), on a private redis-server.
 *
 * - shared: the pool's SellerTokens (one token per seller in Redis, one request at
 *   a time per seller across the pool, fetched a third of its life early).
 * - naive: what a pool writes without it: each process keeps its own copy, and a
 *   slot that finds none (or an expired one) asks for one.
 *
 * Prints one JSON object: token requests per seller (median, max), the most token
 * requests of one seller in flight at once, and calls met with an expired token.
 * Writes nothing; the figures go into the closing note and docs by hand.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../src/dev/redis-server.js';
import { MockMarketplace } from '../src/mock-api/marketplace.js';
import { defineCommands } from '../src/lua-commands.js';
import { loadAdapter } from '../src/registration/load-adapter.js';
import { createRegistrationClient } from '../src/registration/client.js';
import { CredentialStore } from '../src/registration/credentials.js';
import { Redactor } from '../src/registration/redactor.js';
import { SellerTokens } from '../src/registration/tokens.js';
import { createLogger } from '../src/logger.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const PROCESSES = 16;
const SLOTS = 10;
const SELLERS = 20;
const LIFE_MS = 5000;
const RUN_MS = 20_000;

const sellers = Array.from({ length: SELLERS }, (_, i) => `T${i + 1}`);
const clients = Object.fromEntries(sellers.map((s) => [s, { clientId: `c-${s}`, clientSecret: `secret-${s}-0123456789` }]));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function child(mode: 'shared' | 'naive', redisPort: number, apiUrl: string, credentialsFile: string, until: number): Promise<void> {
  const redis = defineCommands(new Redis({ port: redisPort, host: '127.0.0.1' }));
  const adapter = await loadAdapter({ registrationAdapter: join(PACKAGE_ROOT, 'examples', 'marketplace-adapter.mjs'), registrationToken: undefined });
  const redactor = new Redactor();
  const credentials = CredentialStore.open(credentialsFile, redactor);
  const client = createRegistrationClient({ baseUrl: apiUrl, timeoutMs: 5000, adapter, redactor });
  const log = createLogger({ level: 'silent', pretty: false, name: 'storm' });
  const tokens = new SellerTokens({ redis, ns: 'storm', client, credentials, redactor, log, timeoutMs: 5000 });
  const own = new Map<string, { token: string; endsAt: number }>();
  let row = 0;
  const slot = async (n: number) => {
    while (Date.now() < until) {
      const sellerId = sellers[(n + row++) % sellers.length]!;
      let token: string | undefined;
      if (mode === 'shared') {
        const t = await tokens.get(sellerId);
        token = 'token' in t ? t.token : undefined;
      } else {
        const mine = own.get(sellerId);
        if (mine && mine.endsAt > Date.now()) token = mine.token;
        else {
          const t = await client.requestToken({ sellerId, credentials: credentials.for(sellerId), now: Date.now() });
          if ('token' in t) {
            own.set(sellerId, { token: t.token, endsAt: Date.now() + t.expiresInMs });
            token = t.token;
          }
        }
      }
      if (!token) { await sleep(200); continue; }
      const key = `${process.pid}-${n}-${row}`;
      await client.register({ sellerId, uploadId: 'storm', row, idempotencyKey: key, product: { sku: key, name: 'storm', price: 1000, stock: 1, category: 'C1' }, attributes: {}, credentials: credentials.for(sellerId), token, now: Date.now() });
    }
  };
  await Promise.all(Array.from({ length: SLOTS }, (_, n) => slot(n)));
  client.close();
  redis.disconnect();
}

async function run(mode: 'shared' | 'naive') {
  const redis = await startRedisServer();
  const market = new MockMarketplace({
    clients, tokenLifetimeMs: LIFE_MS, tokenRule: { max: 100_000, windowMs: 1000 }, rule: { max: 100_000, windowMs: 1000 },
    latencyMs: { min: 150, max: 250 }, tokenLatencyMs: { min: 100, max: 200 }, keepBodies: 0,
  });
  const port = await market.listen(0);
  const dir = mkdtempSync(join(tmpdir(), 'storm-'));
  writeFileSync(join(dir, 'credentials.json'), JSON.stringify(clients));
  const until = Date.now() + 3000 + RUN_MS;
  const self = fileURLToPath(import.meta.url);
  const children = Array.from({ length: PROCESSES }, () =>
    fork(self, ['child', mode, String(redis.port), `http://127.0.0.1:${port}`, join(dir, 'credentials.json'), String(until)], { stdio: 'inherit' }));
  await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
  const stats = Object.values(market.stats().sellers);
  await market.close();
  await redis.stop();
  const requests = stats.map((s) => s.tokenRequests).sort((a, b) => a - b);
  return {
    mode,
    tokenRequestsPerSeller: { median: requests[Math.floor(requests.length / 2)], max: requests.at(-1) },
    bound: Math.ceil((RUN_MS + 3000) / (LIFE_MS / 2)) + 3,
    mostInFlightForOneSeller: Math.max(...stats.map((s) => s.concurrentTokenRequestsMax)),
    expiredTokenCalls: stats.reduce((n, s) => n + s.expiredTokenCalls, 0),
    calls: stats.reduce((n, s) => n + s.calls, 0),
  };
}

if (process.argv[2] === 'child') {
  const [, , , mode, port, apiUrl, file, until] = process.argv;
  await child(mode as 'shared' | 'naive', Number(port), apiUrl!, file!, Number(until));
  process.exit(0);
} else {
  const results = [];
  for (const mode of ['naive', 'shared'] as const) results.push(await run(mode));
  process.stdout.write(`${JSON.stringify({ processes: PROCESSES, slots: SLOTS, sellers: SELLERS, tokenLifeMs: LIFE_MS, runMs: RUN_MS + 3000, results }, null, 2)}\n`);
}
