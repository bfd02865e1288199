/**
 * Per-seller rules (seller tiers): a `rule` string ("{max}/{windowMs}") under the
 * seller's hash tag, read by the limiter scripts on every call in the one MGET
 * that also reads the seller's block and throttle flag, and an index of sellers
 * with one.
 *
 * An earlier version kept the rule in a hash (`limits`: max, windowMs), which
 * took a read of its own on every call. migrateLimits moves such a hash to the
 * string; `workers` runs it before its pool starts, and each `limits` command
 * before it reads or writes.
 */
import type { Config } from '../config.js';
import { limitIndexKey, namespaceOf, sellerKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';

export const ruleValue = (max: number, windowMs: number) => `${max}/${windowMs}`;

/** A `rule` string's max and window, undefined when absent or not in that form. */
export function parseRule(value: string | null): { max: number; windowMs: number } | undefined {
  const m = value === null ? null : /^(\d+)\/(\d+)$/.exec(value);
  return m ? { max: Number(m[1]), windowMs: Number(m[2]) } : undefined;
}

export async function setLimit(redis: RedisClient, config: Config, sellerId: string, max: number, windowMs: number): Promise<void> {
  const ns = namespaceOf(config.queuePrefix);
  const keys = sellerKeys(ns, sellerId);
  await redis.set(keys.rule, ruleValue(max, windowMs));
  await redis.del(keys.legacyLimits);
  await redis.sadd(limitIndexKey(ns), sellerId);
}

export async function resetLimit(redis: RedisClient, config: Config, sellerId: string): Promise<boolean> {
  const ns = namespaceOf(config.queuePrefix);
  const keys = sellerKeys(ns, sellerId);
  const removed = await redis.del(keys.rule, keys.legacyLimits);
  await redis.srem(limitIndexKey(ns), sellerId);
  return removed > 0;
}

export async function listLimits(redis: RedisClient, config: Config): Promise<Array<{ sellerId: string; max: number; windowMs: number }>> {
  const ns = namespaceOf(config.queuePrefix);
  const sellers = (await redis.smembers(limitIndexKey(ns))).sort();
  const out = [];
  for (const sellerId of sellers) {
    const rule = parseRule(await redis.get(sellerKeys(ns, sellerId).rule));
    if (rule) out.push({ sellerId, ...rule });
  }
  return out;
}

/**
 * Moves every indexed seller's rule kept in the earlier hash to its `rule` string
 * (a rule already in the string wins). Idempotent; returns how many it moved.
 */
export async function migrateLimits(redis: RedisClient, config: Config): Promise<number> {
  const ns = namespaceOf(config.queuePrefix);
  const sellers = (await redis.smembers(limitIndexKey(ns))).map((sellerId) => sellerKeys(ns, sellerId));
  // every seller's earlier hash read at once: one round trip, not one per seller, at each start
  const legacy = await Promise.all(sellers.map((keys) => redis.hmget(keys.legacyLimits, 'max', 'windowMs')));
  let moved = 0;
  for (const [i, keys] of sellers.entries()) {
    const [max, windowMs] = legacy[i]!;
    if (max === null) continue;
    const windowOf = Number(windowMs ?? config.rateLimitWindowMs);
    // `limits set` only ever wrote whole numbers: anything else is left where it is
    if (!Number.isInteger(Number(max)) || !Number.isInteger(windowOf)) continue;
    if ((await redis.set(keys.rule, ruleValue(Number(max), windowOf), 'NX')) === 'OK') moved++;
    await redis.del(keys.legacyLimits);
  }
  return moved;
}
