import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { PACKAGE_ROOT } from '../src/paths.js';

/** REDIS_URL's default as the docs/configuration.md's table of variables documents it (no Redis is contacted). */
const documentedRedisUrl = /^\| REDIS_URL \| (\S+) \|/m.exec(readFileSync(join(PACKAGE_ROOT, 'docs', 'configuration.md'), 'utf8'))?.[1];

describe('loadConfig', () => {
  it('uses the defaults of cli.md', () => {
    const c = loadConfig({});
    expect(documentedRedisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(c).toMatchObject({
      redisUrl: documentedRedisUrl, redisClusterNodes: [], redisSentinels: [], redisSentinelName: 'mymaster', apiUrl: 'http://127.0.0.1:3000',
      rateLimitMax: 100, rateLimitWindowMs: 60_000, rateLimitGuardMs: 500, workerProcesses: 16,
      workerConcurrency: 'auto', apiTimeoutMs: 10_000, maxAttempts: 5, queuePrefix: '{bulk-register}', logLevel: 'info', mockApiPort: 3000,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('refuses a REDIS_URL whose database is not a number, and a database other than 0 on a cluster', () => {
    for (const url of ['redis://redis.example:6400/abc', 'redis://redis.example:6400/?db=x', 'redis://redis.example:6400/1/2']) {
      expect(() => loadConfig({ REDIS_URL: url }), url).toThrow(/the database must be a number/);
    }
    expect(() => loadConfig({ REDIS_URL: 'http://x' })).not.toThrow(/the database must be a number/);
    for (const url of ['redis://redis.example:6400', 'redis://redis.example:6400/', 'redis://redis.example:6400/3', 'redis://redis.example:6400?db=2']) {
      expect(() => loadConfig({ REDIS_URL: url }), url).not.toThrow();
    }
    expect(() => loadConfig({ REDIS_URL: 'redis://redis.example:6400/2', REDIS_CLUSTER_NODES: '127.0.0.1:7000' })).toThrow(/a Redis Cluster has only database 0/);
  });

  it('names every bad variable, its value and what is expected', () => {
    let message = '';
    try {
      loadConfig({ RATE_LIMIT_MAX: 'abc', REDIS_URL: 'http://x', WORKER_PROCESSES: '0' });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toContain('RATE_LIMIT_MAX="abc" is invalid: expected a whole number of registrations from 1 to 1000000.');
    expect(message).toContain('REDIS_URL="http://x" is invalid: expected a redis:// or rediss:// URL');
    expect(message).toContain('WORKER_PROCESSES="0" is invalid');
  });

  it('reads cluster seeds and refuses a QUEUE_PREFIX without a hash tag in cluster mode', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001' }).redisClusterNodes).toEqual([
      { host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 },
    ]);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000', QUEUE_PREFIX: 'plain' })).toThrow(/QUEUE_PREFIX="plain" is invalid: in cluster mode/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'nohost' })).toThrow(/REDIS_CLUSTER_NODES="nohost" is invalid/);
    expect(loadConfig({ REDIS_SENTINELS: '10.0.0.1:26400,10.0.0.2:26400', REDIS_SENTINEL_NAME: 'main' })).toMatchObject({
      redisSentinels: [{ host: '10.0.0.1', port: 26400 }, { host: '10.0.0.2', port: 26400 }], redisSentinelName: 'main',
    });
    expect(() => loadConfig({ REDIS_SENTINELS: 'x' })).toThrow(/REDIS_SENTINELS="x" is invalid/);
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:1', REDIS_CLUSTER_NODES: 'b:2' })).toThrow(/both set: set one of them/);
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig({ RATE_LIMIT_MAX: '', REDIS_CLUSTER_NODES: '' }).rateLimitMax).toBe(100);
  });
});
