/**
 * A big upload reaches the pool one window at a time. Rows beyond the seller's
 * first window (its rule's L) are added as delayed jobs, each window's rows due
 * a little before that window can open, and ask for their permits then.
 *
 * Added all at once, a 500-row upload under 50 per window had the pool take
 * every row in its first second: 450 permit asks, priority changes and delays in
 * the same 16 processes that were sending the first window, whose sends then
 * spread over 180-900 ms on a 2-core host (bench, single-500), and every later
 * window inherits its first's spread. Those 450 rows were also planned in that
 * second, each window's slots from a guessed answer time that the burst itself
 * inflated, so later windows started up to 150 ms late. Deferred, a window's rows
 * ask when the window before has been sent and answered: the limiter (which
 * alone decides, lua/lib/acquire-permit.lua) plans them from real answer times.
 *
 * The deferral only spreads the asks: a row woken early is planned and delayed
 * as before, a row woken late is sent late. It is counted from the upload's
 * enqueue with the rule in force then, so rows wake early, never late, when the
 * seller has other rows ahead or its rule is lowered. When its rule is raised
 * (the marketplace announces more, or `limits set`), the deferred rows are
 * brought forward at once (bringDeferredForward), to be planned under it.
 */
import { parseRule } from '../rate-limit/seller-limits.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import type { QueueSet } from '../queue.js';
import { promoteIfDelayed, queuedRow } from '../queued-row.js';
import type { SellerKeys } from '../keys.js';

/**
 * How long before its window can open a deferred row wakes (ms): a quarter of
 * W + G, at most 1 s. Its first ask then plans its slot, and the worker wakes it
 * again just before the slot (WAKE_LEAD_MS, worker/processor.ts), when the
 * re-check grants it for the moment its place in the window frees.
 */
export const deferLeadMs = (spanMs: number): number => Math.min(1000, Math.floor(spanMs / 4));

/** The seller's rule in force: its own (`rule`), else the configured one; with W + G. */
export interface DeferRule {
  limit: number;
  spanMs: number;
}

/** The delay (ms) of the row at `index` (0-based) of an upload: 0 in its first window. Pure. */
export function deferralMs(index: number, rule: DeferRule): number {
  const window = Math.floor(index / rule.limit);
  return window === 0 ? 0 : Math.max(1, window * rule.spanMs - deferLeadMs(rule.spanMs));
}

/** The rule in force when a seller has no `rule` string of its own. */
export interface DefaultRule {
  limit: number;
  windowMs: number;
}

/** The rule a seller's `rule` string (as `GET rule` gave it) puts in force, as lib/seller-rule.lua reads it: its own, else the default. Pure. */
const ruleInForce = (value: string | null | undefined, defaults: DefaultRule): DefaultRule => {
  const own = parseRule(value);
  return own ? { limit: own.max, windowMs: own.windowMs } : defaults;
};

/** The configured rule: the one in force for a seller with no `rule` string of its own. Pure. */
export const configuredRule = (config: Config): DefaultRule => ({ limit: config.rateLimitMax, windowMs: config.rateLimitWindowMs });

/** The rule the producer defers a seller's rows by, from its `rule` string (as `GET rule` gave it). Pure. */
export function ruleForDeferral(value: string | null, config: Config): DeferRule {
  const { limit, windowMs } = ruleInForce(value, configuredRule(config));
  return { limit: Math.max(1, limit), spanMs: windowMs + config.rateLimitGuardMs };
}

/**
 * Records that rows of the seller are deferred (lua/defer-rows.lua), `jobs[i]` being
 * the job of the upload's row at index i on the queue `prefix`: the log's throttle flag
 * lasts until its last deferred window at least, and the deferred jobs are noted for
 * bringDeferredForward. Nothing when every row fits in the first window.
 */
export async function noteDeferral(redis: RedisClient, keys: SellerKeys, rule: DeferRule, prefix: string, jobs: readonly string[]): Promise<void> {
  if (jobs.length <= rule.limit) return;
  const last = deferralMs(jobs.length - 1, rule) + deferLeadMs(rule.spanMs);
  await redis.deferRows(keys.defer, keys.deferred, last, rule.spanMs, ...jobs.slice(rule.limit).map((id) => queuedRow(prefix, id)));
}

/** The rate a `rule` string allows (per ms), the default one's when absent or unreadable. */
const rateOf = (value: string | null | undefined, defaults: DefaultRule): number => {
  const { limit, windowMs } = ruleInForce(value, defaults);
  return limit / Math.max(1, windowMs);
};

/** Whether the seller's rule, `before` -> `after` (rule strings; null: the default one), allows more than before. */
export function ruleRaised(before: string | null | undefined, after: string | null | undefined, defaults: DefaultRule): boolean {
  return rateOf(after, defaults) > rateOf(before, defaults);
}

/**
 * The seller's rule was raised: its deferred rows are promoted now, and ask for permits
 * under the new rule instead of waiting for windows of the old one. Each is taken off
 * the set before it is promoted (SPOP); a row that is no longer delayed (woken already)
 * is left as it is. Returns how many were promoted.
 */
export async function bringDeferredForward(redis: RedisClient, keys: SellerKeys, queues: QueueSet, log?: Logger): Promise<number> {
  await redis.del(keys.defer);
  let promoted = 0;
  for (;;) {
    const batch = (await redis.spop(keys.deferred, 500)) as string[];
    if (!batch || batch.length === 0) return promoted;
    promoted += await promoteDeferred(queues, batch, log);
  }
}

/**
 * The producer's own rows `entries` (queuedRow strings), once all of them are in the queue,
 * when the seller's rule was raised while they were being added: the raise's
 * bringDeferredForward took the entries of rows not yet added off the set and could not
 * promote them, so the producer does. Returns how many were promoted.
 */
export async function bringRowsForward(redis: RedisClient, keys: SellerKeys, queues: QueueSet, entries: readonly string[]): Promise<number> {
  await redis.multi().del(keys.defer).srem(keys.deferred, ...entries).exec();
  return promoteDeferred(queues, entries);
}

/** Promotes the rows `entries` that are still delayed; a row woken or started meanwhile is left as it is. */
async function promoteDeferred(queues: QueueSet, entries: readonly string[], log?: Logger): Promise<number> {
  const outcomes = await Promise.all(entries.map(async (entry) => {
    try {
      return (await promoteIfDelayed(queues, entry)) === 'delayed';
    } catch (err) {
      // woken or started meanwhile: nothing to bring forward
      log?.debug({ err, row: entry }, 'a deferred row was no longer delayed');
      return false;
    }
  }));
  return outcomes.filter(Boolean).length;
}
