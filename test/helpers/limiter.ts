import { Redis } from 'ioredis';
import { defineCommands } from '../../src/lua-commands.js';
import type { RedisClient } from '../../src/redis.js';
import { SellerLimiter, type LimiterSettings } from '../../src/rate-limit/limiter.js';
import type { TestRedis } from './redis-server.js';

/** A limiter on the file's test server, through a connection the server closes when it stops. */
export function limiterOn(server: Pick<TestRedis, 'client'>, settings: Partial<LimiterSettings> = {}) {
  const redis = defineCommands(server.client()) as RedisClient;
  const limiter = new SellerLimiter(redis, {
    queuePrefix: settings.queuePrefix ?? `{t${Math.random().toString(36).slice(2, 8)}}`,
    limit: settings.limit ?? 5,
    windowMs: settings.windowMs ?? 1000,
    guardMs: settings.guardMs ?? 100,
    holdMs: settings.holdMs ?? 2000,
  });
  return { redis, limiter };
}

export async function redisTime(redis: Pick<Redis, "time">): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** How many times Redis has run `cmd` (lower case) since its stats were reset, scripts' calls included. */
export async function commandCalls(redis: Pick<Redis, 'info'>, cmd: string): Promise<number> {
  return Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(await redis.info('commandstats'))?.[1] ?? 0);
}

/** Any `limit + 1` consecutive times are at least `spanMs` apart: the smallest such gap. */
export function minGap(times: number[], limit: number): number {
  const t = [...times].sort((a, b) => a - b);
  let min = Infinity;
  for (let i = 0; i + limit < t.length; i++) min = Math.min(min, t[i + limit]! - t[i]!);
  return min;
}
