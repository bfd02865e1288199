/**
 * Per-seller rules: a `rule` string ("{max}/{windowMs}") under the seller's hash
 * tag, read by the limiter scripts on every call in the one MGET that also reads
 * the seller's block and throttle flag: the rule in force. Where it comes from:
 *
 * - `api`: the rule the marketplace last announced for the seller (`apiRule`,
 *   marketplace.md). It wins: it is what the marketplace enforces, so anything
 *   higher meets 429s and anything lower wastes the seller's allowance.
 * - `override`: the operator's `limits set` (`override`), in force while the
 *   marketplace announces nothing.
 * - `config`: RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS (no `rule` string).
 *
 * An index lists the sellers with an override.
 *
 * An earlier version kept the rule in a hash (`limits`: max, windowMs), which
 * took a read of its own on every call. migrateLimits moves such a hash to the
 * string; `workers` runs it before its pool starts, and each `limits` command
 * before it reads or writes.
 */
import type { Config } from '../config.js';
import { bySellerId, limitIndexKey, namespaceOf, sellerKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';
import { homeOf, pinHome, sellerKeysOf } from '../seller-home.js';
import { resolveShardPrefixes } from '../queue-shards.js';
import { MARKETPLACE_RULES, steerKey } from '../steering/steer-key.js';

export const ruleValue = (max: number, windowMs: number) => `${max}/${windowMs}`;

/** A `rule` string's max and window, undefined when absent or not in that form. */
export function parseRule(value: string | null | undefined): { max: number; windowMs: number } | undefined {
  const m = value == null ? null : /^(\d+)\/(\d+)$/.exec(value);
  return m ? { max: Number(m[1]), windowMs: Number(m[2]) } : undefined;
}

export type RuleSource = 'config' | 'override' | 'api';

/**
 * Sets the operator's rule; it is in force unless the marketplace announced one.
 * Returns the source in force after it.
 */
export async function setLimit(redis: RedisClient, config: Config, sellerId: string, max: number, windowMs: number): Promise<RuleSource> {
  const ns = namespaceOf(config.queuePrefix);
  // a seller's first rule pins it on a cluster, as its first upload would (seller-home.ts)
  const keys = sellerKeys(ns, sellerId, (await pinHome(redis, config, sellerId, resolveShardPrefixes(config, redis))).home);
  const value = ruleValue(max, windowMs);
  await redis.set(keys.override, value);
  const api = await redis.get(keys.apiRule);
  if (api === null) await redis.set(keys.rule, value);
  await redis.del(keys.legacyLimits);
  await redis.sadd(limitIndexKey(ns), sellerId);
  return api === null ? 'override' : 'api';
}

/** Drops the operator's rule: the announced one, else the defaults, are in force. */
export async function resetLimit(redis: RedisClient, config: Config, sellerId: string): Promise<boolean> {
  const ns = namespaceOf(config.queuePrefix);
  const keys = await sellerKeysOf(redis, ns, sellerId);
  const api = await redis.get(keys.apiRule);
  const removed = api === null ? await redis.del(keys.override, keys.rule, keys.legacyLimits) : await redis.del(keys.override, keys.legacyLimits);
  await redis.srem(limitIndexKey(ns), sellerId);
  return removed > 0;
}

/**
 * The marketplace announced `rule` for the seller: it is in force from now on
 * (the next permit is decided under it). One transaction on the seller's slot.
 */
export async function announceRule(redis: RedisClient, ns: string, sellerId: string, rule: { max: number; windowMs: number }, home?: string): Promise<string | null> {
  const keys = sellerKeys(ns, sellerId, home ?? (await homeOf(redis, ns, sellerId)));
  const value = ruleValue(rule.max, rule.windowMs);
  const replies = await redis.multi().set(keys.apiRule, value).set(keys.rule, value, 'GET').exec();
  // the rule in force before (null: the configured one)
  return (replies?.[1]?.[1] as string | null | undefined) ?? null;
}

/**
 * The marketplace announces sellers' rules in its answers: `marketplace-rules` in the
 * steering hash, which every worker process reads, says so from the first answer
 * that carried one. From then on, a seller none of whose sends was answered in the
 * last span sends one row first and the rest once its answer has brought the rule
 * in force (sliding-window.lua): the rule of a seller new to the pool, or one the
 * marketplace lowered while the seller sent nothing, is then known before a burst
 * can exceed it. Before any answer has carried a rule the pool does not wait so: a
 * fresh pool's sellers would each hold all but one row of their first window for
 * an answer, though most APIs announce nothing.
 */
export const RULES_ANNOUNCED = 'announced';

export async function noteRulesAnnounced(redis: RedisClient, ns: string): Promise<void> {
  await redis.hset(steerKey(ns), MARKETPLACE_RULES, RULES_ANNOUNCED);
}

/** Where the seller's rule in force comes from. */
export async function ruleSourceOf(redis: RedisClient, ns: string, sellerId: string): Promise<RuleSource> {
  const keys = await sellerKeysOf(redis, ns, sellerId);
  const [api, rule] = await redis.mget(keys.apiRule, keys.rule);
  return api !== null ? 'api' : rule !== null ? 'override' : 'config';
}

export async function listLimits(redis: RedisClient, config: Config): Promise<Array<{ sellerId: string; max: number; windowMs: number; announced?: { max: number; windowMs: number } }>> {
  const ns = namespaceOf(config.queuePrefix);
  const sellers = (await redis.smembers(limitIndexKey(ns))).sort(bySellerId);
  const out = [];
  for (const sellerId of sellers) {
    const keys = await sellerKeysOf(redis, ns, sellerId);
    const [override, rule, api] = await redis.mget(keys.override, keys.rule, keys.apiRule);
    // an override written before announced rules existed is the `rule` string alone
    const own = parseRule(override) ?? (api === null ? parseRule(rule) : undefined);
    const announced = parseRule(api);
    if (own) out.push({ sellerId, ...own, ...(announced ? { announced } : {}) });
  }
  return out;
}

/**
 * Moves every indexed seller's rule kept in the earlier hash to its `rule` string
 * (a rule already in the string wins). Idempotent; returns how many it moved.
 */
export async function migrateLimits(redis: RedisClient, config: Config): Promise<number> {
  const ns = namespaceOf(config.queuePrefix);
  const sellers = await Promise.all((await redis.smembers(limitIndexKey(ns))).map((sellerId) => sellerKeysOf(redis, ns, sellerId)));
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
