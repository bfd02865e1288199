/**
 * Redis through Sentinels (REDIS_SENTINELS): every command finds the master
 * through them, and the pool carries on after the master fails over.
 * Real redis-server, replica and Sentinel processes; REDIS_URL points nowhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { baseEnv, runCli, startCli, type Running } from '../helpers/cli.js';
import { freePort } from '../helpers/redis-server.js';
import { startSentinelSet, type SentinelSet } from '../helpers/redis-sentinel.js';
import { FIXTURES_DIR } from '../../src/paths.js';

let set: SentinelSet;
let api: Running;
let env: NodeJS.ProcessEnv;
let apiUrl: string;

beforeAll(async () => {
  set = await startSentinelSet('main', 1, 1000);
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  env = baseEnv({
    REDIS_URL: 'redis://127.0.0.1:1', REDIS_SENTINELS: set.seeds, REDIS_SENTINEL_NAME: 'main',
    REGISTRATION_API_URL: apiUrl, QUEUE_PREFIX: '{sentinel}', RATE_LIMIT_MAX: '50', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100',
    SHUTDOWN_TIMEOUT_MS: '10000', LOCK_DURATION_MS: '2000',
  });
  api = startCli(['mock-api', '--port', String(port)], { ...env, MOCK_LATENCY_MS: '150-250' });
  await api.waitFor(/mock registration API listening/);
});

afterAll(async () => {
  await api?.stop();
  await set?.stop();
});

describe('Redis through Sentinels', () => {
  it('uploads, works, reports status and limits through the Sentinels, and carries on after a failover', async () => {
    const pool = startCli(['workers', '--processes', '2'], env);
    const up = await runCli(['upload', join(FIXTURES_DIR, 'seller-a-150.xlsx'), '--seller', 'S1', '--json'], env);
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout).enqueued).toBe(150);
    expect((await runCli(['limits', 'list', '--json'], env)).code).toBe(0);

    // some rows registered, then the master dies
    const stats = async () => (await (await fetch(`${apiUrl}/_stats`)).json()) as { sellers: Record<string, { registered: number; tooMany: number }> };
    while (((await stats()).sellers.S1?.registered ?? 0) < 30) await new Promise((r) => setTimeout(r, 50));
    set.master.process.kill('SIGKILL');
    const killedAt = Date.now();
    // the Sentinel promotes the replica (down-after 1000 ms)
    const sentinel = set.sentinelClient();
    while (Number(((await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'main')) as string[])[1]) !== set.replica.port) {
      if (Date.now() - killedAt > 30_000) throw new Error('no failover within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    sentinel.disconnect();

    const done = await runCli(['status', '--wait', '--json'], env, 90_000);
    expect(done.code).toBe(0);
    const upload = JSON.parse(done.stdout).uploads.find((u: { sellerId: string }) => u.sellerId === 'S1');
    // rows counted on the old master after its last replicated write may be lost with it;
    // the upload still finishes: its jobs run again and the API answers them as replays
    expect(upload).toMatchObject({ total: 150, done: true });
    const s1 = (await stats()).sellers.S1!;
    expect(s1.registered).toBe(150);
    expect(s1.tooMany).toBe(0);
    expect(await pool.stop('SIGTERM')).toBe(0);
  });

  it('says in one sentence where it looked when the Sentinels do not answer', async () => {
    const r = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S9'], { ...env, REDIS_SENTINELS: '127.0.0.1:1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Cannot reach the Redis master "main" through the Sentinels at 127\.0\.0\.1:1 .*REDIS_SENTINELS\.\n$/);
  });
});
