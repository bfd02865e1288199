/** `bulk-register limits set|list|reset`: per-seller rules (seller tiers) kept in Redis. */
import type { Config } from '../config.js';
import { SELLER_ID, namespaceOf } from '../keys.js';
import { QueueSet } from '../queue.js';
import { connectChecked, createRedis, type RedisClient } from '../redis.js';
import { listLimits, migrateLimits, resetLimit, setLimit } from '../rate-limit/seller-limits.js';
import { sellerKeysOf } from '../seller-home.js';
import { bringDeferredForward, configuredRule, ruleRaised } from '../upload/deferral.js';
import { formatWindow } from '../progress/eta.js';
import { EXIT, UsageError } from './exit.js';

/**
 * Runs a change of the seller's rule; when the rule in force after it allows more than
 * before, the rows the producer deferred under the old one ask for permits now
 * (upload/deferral.ts). Returns what the change returned.
 */
async function changeRule<T>(redis: RedisClient, config: Config, sellerId: string, change: () => Promise<T>): Promise<T> {
  const ns = namespaceOf(config.queuePrefix);
  const before = await redis.get((await sellerKeysOf(redis, ns, sellerId)).rule);
  const result = await change();
  // read again: a seller's first rule pins it on a cluster, and its keys then carry the shard's tag
  const keys = await sellerKeysOf(redis, ns, sellerId);
  if (ruleRaised(before, await redis.get(keys.rule), configuredRule(config))) {
    const queues = QueueSet.on(redis, []);
    try {
      await bringDeferredForward(redis, keys, queues);
    } finally {
      await queues.close();
    }
  }
  return result;
}

function checkSeller(seller: string): void {
  if (!SELLER_ID.test(seller)) throw new UsageError(`seller ${JSON.stringify(seller)} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -`);
}

export async function limitsCommand(
  action: 'set' | 'list' | 'reset',
  args: { seller?: string; max?: number; windowMs?: number; json?: boolean },
  config: Config,
): Promise<number> {
  if (args.seller !== undefined) checkSeller(args.seller);
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  try {
    await migrateLimits(redis, config);
    if (action === 'set') {
      const windowMs = args.windowMs ?? config.rateLimitWindowMs;
      await changeRule(redis, config, args.seller!, () => setLimit(redis, config, args.seller!, args.max!, windowMs));
      process.stdout.write(`seller ${args.seller}: at most ${args.max} registrations per ${formatWindow(windowMs)} (from its next permit on)\n`);
    } else if (action === 'reset') {
      const had = await changeRule(redis, config, args.seller!, () => resetLimit(redis, config, args.seller!));
      process.stdout.write(had ? `seller ${args.seller}: back to the default rule (${config.rateLimitMax} per ${formatWindow(config.rateLimitWindowMs)})\n` : `seller ${args.seller} had no override; it uses the default rule\n`);
    } else {
      const limits = await listLimits(redis, config);
      if (args.json) process.stdout.write(`${JSON.stringify({ default: { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs }, sellers: limits })}\n`);
      else {
        const lines = [`default: ${config.rateLimitMax} per ${formatWindow(config.rateLimitWindowMs)}`, ...limits.map((l) => `${l.sellerId}: ${l.max} per ${formatWindow(l.windowMs)}`)];
        process.stdout.write(`${lines.join('\n')}\n`);
      }
    }
    return EXIT.ok;
  } finally {
    redis.disconnect();
  }
}
