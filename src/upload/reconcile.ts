/**
 * Heals uploads whose counters fell behind their jobs. On Redis Cluster a
 * seller's counters (the seller's hash tag) and its jobs (the queue's) live on
 * two masters that fail over independently: a failover that loses the
 * counters' last writes leaves rows whose jobs finished but which no counter
 * holds, and the upload would never be done. The pool looks at unfinished
 * uploads that made no progress for a while and counts such rows again from
 * their jobs' final state (the processor's return value, or BullMQ's failed
 * reason). Counting is idempotent (a row is counted once, first outcome wins),
 * so pools on several hosts may do it at once.
 */
import type { Config } from '../config.js';
import { namespaceOf, rowMember, uploadIndexKey } from '../keys.js';
import type { Logger } from '../logger.js';
import { openRows } from './lost-rows.js';
import type { RedisClient } from '../redis.js';
import type { PermitLimiter } from '../rate-limit/limiter.js';
import type { ProcessResult } from '../worker/processor.js';
import { logRowCounted } from '../progress/progress-log.js';
import { uploadKeysOf } from '../seller-home.js';

/** BullMQ's reason for a job it gave up on after it stalled more often than maxStalledCount (a failed job keeps only this text). */
const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';
/** What a seller reads for such a row instead: what happened, and what to do. */
export const STALLED_REASON = 'the row was interrupted several times (the worker process handling it stopped or froze each time) and was given up; whether the marketplace registered it is not known: upload it again with the rows to fix, and a product it registered comes back as a duplicate';

/** An unfinished upload is looked at once it made no progress for this long (ms). */
export const STALL_MS = 5000;

interface FinishedJob {
  row: number;
  result: ProcessResult;
}

/** The rows of an upload whose jobs finished but which are not counted. Read-only. */
export async function uncountedRows(redis: RedisClient, config: Config, sellerId: string, uploadId: string): Promise<FinishedJob[]> {
  const { open, jobKey } = await openRows(redis, config, namespaceOf(config.queuePrefix), sellerId, uploadId);
  if (open.length === 0) return [];
  // the jobs all share the queue's hash tag: one pipeline, one node
  const pipeline = redis.pipeline();
  for (const row of open) pipeline.hmget(jobKey(row), 'finishedOn', 'returnvalue', 'failedReason');
  const replies = (await pipeline.exec()) ?? [];
  const finished: FinishedJob[] = [];
  open.forEach((row, i) => {
    const [finishedOn, returnvalue, failedReason] = (replies[i]?.[1] ?? []) as Array<string | null>;
    if (!finishedOn) return; // waiting, delayed, active, or gone
    if (returnvalue && returnvalue !== 'null') {
      try {
        const result = JSON.parse(returnvalue) as ProcessResult;
        if (result.outcome === 'registered' || result.outcome === 'duplicate' || result.outcome === 'failed' || result.outcome === 'cancelled') finished.push({ row, result });
      } catch {
        // not a return value the processor wrote
      }
    } else if (failedReason) {
      finished.push({ row, result: { outcome: 'failed', reason: failedReason === STALLED_TOO_OFTEN ? STALLED_REASON : failedReason } });
    }
  });
  return finished;
}

/**
 * Counts the finished rows no counter holds, for every unfinished upload that
 * made no progress since the previous pass. Call it every STALL_MS.
 * @returns rows counted again in this pass
 */
export function createReconciler(redis: RedisClient, limiter: PermitLimiter, config: Config, log: Logger): () => Promise<number> {
  const ns = namespaceOf(config.queuePrefix);
  const lastSeen = new Map<string, number>();
  return async () => {
    let healed = 0;
    const members = await redis.zrange(uploadIndexKey(ns), '0', '-1');
    const current = new Set<string>();
    for (const member of members) {
      const [sellerId, uploadId] = member.split('/') as [string, string];
      const uploadKey = (await uploadKeysOf(redis, ns, sellerId, uploadId)).upload;
      const c = await redis.hmget(uploadKey, 'total', 'registered', 'duplicate', 'failed', 'enqueued');
      if (c[4] !== '1') continue; // still being enqueued
      const total = Number(c[0] ?? 0);
      const finished = Number(c[1] ?? 0) + Number(c[2] ?? 0) + Number(c[3] ?? 0);
      if (finished >= total) continue;
      current.add(member);
      const before = lastSeen.get(member);
      lastSeen.set(member, finished);
      if (before !== finished) continue; // it moves: nothing to heal yet
      let rows = 0;
      const uncounted = await uncountedRows(redis, config, sellerId, uploadId);
      if (uncounted.length === 0) continue;
      const claimFinished = async () => (await redis.hsetnx(uploadKey, 'finishedLogged', 1)) === 1;
      // it was counted finished before its counts were lost: healed, it ends again, with a line of its own
      await redis.hdel(uploadKey, 'finishedLogged');
      for (const { row, result } of uncounted) {
        const counts = await limiter.complete(
          { sellerId, uploadId, row, member: rowMember(uploadId, row), sendId: '' },
          { outcome: result.outcome, detail: { status: result.outcome, ...result }, wantNextPermit: false },
          config.uploadRetentionS,
        );
        if (!counts.counted) continue;
        rows++;
        logRowCounted(log, sellerId, uploadId, counts, { limit: config.rateLimitMax, windowMs: config.rateLimitWindowMs, guardMs: config.rateLimitGuardMs }, 0, undefined, claimFinished);
      }
      if (rows > 0) log.warn({ sellerId, uploadId, rows }, 'rows counted again from their finished jobs (their counts were lost, e.g. by a failover)');
      healed += rows;
    }
    for (const member of lastSeen.keys()) if (!current.has(member)) lastSeen.delete(member);
    return healed;
  };
}
