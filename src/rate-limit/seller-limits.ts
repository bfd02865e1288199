/**
 * Per-seller rules (seller tiers): an override hash under the seller's hash tag,
 * read by the limiter scripts on every call, and an index of sellers with one.
 */
import type { Config } from '../config.js';
import { limitIndexKey, namespaceOf, sellerKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';

export async function setLimit(redis: RedisClient, config: Config, sellerId: string, max: number, windowMs: number): Promise<void> {
  const ns = namespaceOf(config.queuePrefix);
  await redis.hset(sellerKeys(ns, sellerId).limits, { max, windowMs });
  await redis.sadd(limitIndexKey(ns), sellerId);
}

export async function resetLimit(redis: RedisClient, config: Config, sellerId: string): Promise<boolean> {
  const ns = namespaceOf(config.queuePrefix);
  const removed = await redis.del(sellerKeys(ns, sellerId).limits);
  await redis.srem(limitIndexKey(ns), sellerId);
  return removed > 0;
}

export async function listLimits(redis: RedisClient, config: Config): Promise<Array<{ sellerId: string; max: number; windowMs: number }>> {
  const ns = namespaceOf(config.queuePrefix);
  const sellers = (await redis.smembers(limitIndexKey(ns))).sort();
  const out = [];
  for (const sellerId of sellers) {
    const h = await redis.hgetall(sellerKeys(ns, sellerId).limits);
    if (h.max) out.push({ sellerId, max: Number(h.max), windowMs: Number(h.windowMs) });
  }
  return out;
}
