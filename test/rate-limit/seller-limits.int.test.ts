/**
 * Per-seller rules as `limits set` writes them, and as an earlier version kept
 * them (a hash the limiter no longer reads): moved to the string the limiter
 * reads, before a pool starts or a `limits` command runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { baseEnv, startCli } from '../helpers/cli.js';
import { limiterOn } from '../helpers/limiter.js';
import { loadConfig } from '../../src/config.js';
import { limitIndexKey, sellerKeys } from '../../src/keys.js';
import { listLimits, migrateLimits, resetLimit, setLimit } from '../../src/rate-limit/seller-limits.js';

let server: TestRedis;
beforeAll(async () => { server = await startRedis(); });
afterAll(async () => { await server?.stop(); });

describe('per-seller rules', () => {
  it('are read by the limiter from its next call, listed, and reset', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 1, windowMs: 10_000, guardMs: 0, queuePrefix: '{sl1}' });
    const config = loadConfig({ QUEUE_PREFIX: '{sl1}', RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '10000' });
    try {
      await setLimit(redis, config, 'TIER', 3, 20_000);
      const grants = [];
      for (let i = 1; i <= 4; i++) grants.push(await limiter.acquire('TIER', `u:${i}`, `s${i}`));
      expect(grants.map((g) => g.granted)).toEqual([true, true, true, false]);
      expect(grants[0]).toMatchObject({ limit: 3, windowMs: 20_000 });
      expect(await listLimits(redis, config)).toEqual([{ sellerId: 'TIER', max: 3, windowMs: 20_000 }]);
      expect(await resetLimit(redis, config, 'TIER')).toBe(true);
      expect(await listLimits(redis, config)).toEqual([]);
      expect((await limiter.acquire('TIER', 'u:5', 's5')).limit).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it('kept as an earlier version did are moved once, and a rule set since wins', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 1, windowMs: 10_000, guardMs: 0, queuePrefix: '{sl2}' });
    const config = loadConfig({ QUEUE_PREFIX: '{sl2}', RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '10000' });
    try {
      for (const [seller, max] of [['OLD', 4], ['BOTH', 5]] as const) {
        await redis.hset(limiter.keys(seller).legacyLimits, { max, windowMs: 30_000 });
        await redis.sadd(limitIndexKey('sl2'), seller);
      }
      await redis.set(limiter.keys('BOTH').rule, '7/15000');
      // before the move the limiter reads only the string
      expect((await limiter.acquire('OLD', 'u:1', 's1')).limit).toBe(1);
      expect(await migrateLimits(redis, config)).toBe(1);
      expect(await migrateLimits(redis, config)).toBe(0);
      expect(await redis.exists(limiter.keys('OLD').legacyLimits, limiter.keys('BOTH').legacyLimits)).toBe(0);
      expect(await listLimits(redis, config)).toEqual([
        { sellerId: 'BOTH', max: 7, windowMs: 15_000 },
        { sellerId: 'OLD', max: 4, windowMs: 30_000 },
      ]);
      expect(await limiter.acquire('OLD', 'u:2', 's2')).toMatchObject({ limit: 4, windowMs: 30_000 });
    } finally {
      redis.disconnect();
    }
  });

  it('kept as an earlier version did are moved by `workers` before its pool starts', async () => {
    const { redis } = limiterOn(server, { queuePrefix: '{sl3}' });
    const keys = sellerKeys('sl3', 'OLD');
    await redis.hset(keys.legacyLimits, { max: 4, windowMs: 30_000 });
    await redis.sadd(limitIndexKey('sl3'), 'OLD');
    const pool = startCli(['workers', '--processes', '1'], baseEnv({ REDIS_URL: server.url, QUEUE_PREFIX: '{sl3}', REGISTRATION_API_URL: 'http://127.0.0.1:9' }));
    try {
      await pool.waitFor(/worker pool started/);
      expect(pool.output()).toContain('moved per-seller rules');
      expect(await redis.get(keys.rule)).toBe('4/30000');
      expect(await redis.exists(keys.legacyLimits)).toBe(0);
    } finally {
      await pool.stop('SIGTERM');
      redis.disconnect();
    }
  });
});
