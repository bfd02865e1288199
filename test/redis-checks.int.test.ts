/**
 * Start-up checks of Redis's settings, with real processes against redis-servers
 * started with the settings in question.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { baseEnv, runCli, startCli } from './helpers/cli.js';
import { startRedis, type TestRedis } from './helpers/redis-server.js';
import { connectService } from '../src/cli/service-redis.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { FIXTURES_DIR } from '../src/paths.js';
import { WORKER_CONFIG_ENV } from '../src/worker/worker-config.js';

let redis: TestRedis | undefined;
afterEach(async () => {
  await redis?.stop();
  redis = undefined;
});

const sheet = join(FIXTURES_DIR, 'seller-c-7.xlsx');
const envFor = (r: TestRedis) => baseEnv({ REDIS_URL: r.url, QUEUE_PREFIX: '{checks}', REGISTRATION_API_URL: 'http://127.0.0.1:9' });

describe('Redis settings at start-up', () => {
  it('a database REDIS_URL selects that this Redis lacks stops upload and workers with one sentence, and nothing is written to database 0', async () => {
    redis = await startRedis(['--databases', '4']);
    const env = { ...envFor(redis), REDIS_URL: `${redis.url}/9` };
    const upload = await runCli(['upload', sheet, '--seller', 'DB9', '--json'], env);
    expect(upload.code).toBe(1);
    expect(upload.stdout).toBe('');
    expect(upload.stderr).toMatch(/^REDIS_URL selects database 9, which Redis at redis:\/\/127\.0\.0\.1:\d+\/9 does not have \(ERR DB index is out of range\): use a database it has/);
    expect(upload.stderr.trim().split('\n')).toHaveLength(1);
    const workers = await runCli(['workers', '--processes', '1'], env, 30_000);
    expect(workers.code).toBe(1);
    expect(workers.stdout).toMatch(/REDIS_URL selects database 9/);
    expect(await redis.client().dbsize()).toBe(0);
    // one it has is used
    const ok = await runCli(['upload', sheet, '--seller', 'DB3', '--json'], { ...env, REDIS_URL: `${redis.url}/3` });
    expect(ok.code).toBe(0);
    expect(await redis.client().dbsize()).toBe(0);
  });

  it('a Redis that refuses the credentials stops upload, status and workers with one sentence that names REDIS_URL and shows no password', async () => {
    redis = await startRedis(['--requirepass', 'right-pass-77']);
    const none = { ...envFor(redis) };
    const wrong = { ...envFor(redis), REDIS_URL: redis.url.replace('redis://', 'redis://:wr@ng-pass@') };
    for (const [env, why] of [[none, 'it wants a password, and REDIS_URL gives none'], [wrong, 'the user or password REDIS_URL gives is wrong']] as const) {
      for (const args of [['upload', sheet, '--seller', 'PW1', '--json'], ['status'], ['workers', '--processes', '1']]) {
        const run = await runCli(args, env, 30_000);
        expect(run.code, args[0]).toBe(1);
        const out = run.stdout + run.stderr;
        expect(out).toContain(`refused the connection: ${why}; set REDIS_URL with the user and password it wants.`);
        expect(out).not.toMatch(/ng-pass|right-pass|Unexpected error|\n\s+at /);
      }
    }
  });

  it('a worker process on a database this Redis lacks exits with the sentence before its BullMQ worker writes anything to database 0', async () => {
    // the pool's supervisor checks too, but its children start at once: the one that
    // connects first must not serve the queue in database 0 (BullMQ's stalled check
    // writes a key as a worker starts)
    redis = await startRedis(['--databases', '4']);
    const config = loadConfig({ ...envFor(redis), REDIS_URL: `${redis.url}/9`, LOG_LEVEL: 'info', LOG_PRETTY: '0' });
    const child = fork(join(import.meta.dirname, '../dist/src/worker/worker-main.js'), [], {
      env: { ...process.env, [WORKER_CONFIG_ENV]: JSON.stringify(config) }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (out += d));
    const code = await Promise.race([
      new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c))),
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 15_000)),
    ]);
    if (code === 'running') child.kill('SIGKILL');
    expect(code).toBe(1);
    expect(out).toMatch(/REDIS_URL selects database 9, which Redis at redis:\/\/127\.0\.0\.1:\d+\/9 does not have/);
    expect(out).not.toMatch(/worker process ready/);
    expect(await redis.client().keys('*')).toEqual([]);
  }, 30_000);

  it('a long-running command on a database this Redis lacks gets no connection to issue commands on: it is refused first', async () => {
    // ioredis runs every command in database 0 after a failed SELECT: `workers` and the
    // console must not have their connection before the database is known to exist
    redis = await startRedis(['--databases', '4']);
    const config = loadConfig({ ...envFor(redis), REDIS_URL: `${redis.url}/9` });
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    try {
      const connecting = connectService(config, createLogger({ level: 'silent', pretty: false, name: 'test' }), {});
      const first = await Promise.race([connecting.then(() => 'connection'), new Promise<'refused'>((resolve) => {
        const poll = setInterval(() => exit.mock.calls.length > 0 && (clearInterval(poll), resolve('refused')), 10);
      })]);
      expect(first).toBe('refused');
      expect(exit).toHaveBeenCalledWith(1);
    } finally {
      exit.mockRestore();
    }
  });

  it('upload warns about an evicting Redis, and with --strict refuses and enqueues nothing', async () => {
    redis = await startRedis(['--maxmemory-policy', 'allkeys-lru']);
    const env = envFor(redis);
    const warned = await runCli(['upload', sheet, '--seller', 'W1', '--json'], env);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(/warning: Redis has maxmemory-policy allkeys-lru: .*set maxmemory-policy noeviction\./);
    expect(JSON.parse(warned.stdout).enqueued).toBe(7);

    const refused = await runCli(['upload', sheet, '--seller', 'W2', '--strict'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--strict refuses to start\.\n$/);
    expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await redis.client().keys('checks:up:{W2}*')).toEqual([]);
  });

  it('workers warn about eviction and a Redis that keeps nothing on disk; --strict refuses before any worker starts', async () => {
    redis = await startRedis(['--maxmemory-policy', 'volatile-lru']);
    const env = envFor(redis);
    const pool = startCli(['workers', '--processes', '1'], env);
    await pool.waitFor(/keeps nothing on disk/);
    expect(pool.output()).toMatch(/maxmemory-policy volatile-lru/);
    expect(await pool.stop('SIGTERM')).toBe(0);

    const strict = await runCli(['workers', '--processes', '1', '--strict'], env, 30_000);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/maxmemory-policy volatile-lru.*--strict refuses to start\./);
    expect(strict.stdout + strict.stderr).not.toMatch(/worker process ready/);
  });

  it('the console warns about an evicting Redis, and with --strict refuses to start', async () => {
    redis = await startRedis(['--maxmemory-policy', 'allkeys-random']);
    const env = { ...envFor(redis), CONSOLE_PORT: '0' };
    const web = startCli(['console'], env);
    await web.waitFor(/maxmemory-policy allkeys-random/);
    await web.waitFor(/console listening/);
    expect(await web.stop('SIGTERM')).toBe(0);

    const strict = await runCli(['console', '--strict'], env, 30_000);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/maxmemory-policy allkeys-random.*--strict refuses to start\./);
    expect(strict.stdout + strict.stderr).not.toMatch(/console listening/);
  });

  it('says once that the settings cannot be read when CONFIG is refused, and goes on', async () => {
    redis = await startRedis(['--rename-command', 'CONFIG', '']);
    const env = envFor(redis);
    const up = await runCli(['upload', sheet, '--seller', 'W3', '--strict', '--json'], env);
    expect(up.code).toBe(0);
    expect(up.stderr.match(/could not read Redis's settings/g)).toHaveLength(1);
  });

  it('is quiet about a Redis set up as docker-compose sets it up', async () => {
    redis = await startRedis(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']);
    const up = await runCli(['upload', sheet, '--seller', 'W4', '--strict'], envFor(redis));
    expect(up.code).toBe(0);
    expect(up.stderr).toBe('');
  });
});
