/**
 * A fair share of a saturated pool for every seller, from BullMQ's own job
 * priorities (start-time fair queuing, no scheduler of our own).
 *
 * BullMQ serves its prioritized set lowest priority number first, and in the
 * order of insertion within one number. The new rows are served in rounds of
 * two priorities: the even one holds one row of each seller (its next), the odd
 * one the rest of the round's small uploads. A new upload's k-th row (0-based)
 * gets priority `start + 2k`, where `start` is the queue's virtual time: the
 * even priority of the round the oldest new row still waiting is in. So when
 * 200 sellers upload at once, every seller's first row comes before any
 * seller's second one, and a seller who arrives later starts in the current
 * round, not behind everyone's backlog. A seller who still has rows waiting
 * continues in the round after its own last one (`tail`), so two uploads of one
 * seller do not earn it two shares.
 *
 * A small upload (at most SMALL_UPLOAD rows) of a seller with nothing waiting
 * goes into the current round whole: its first row among the other sellers'
 * rows of the round, the rest right behind them (the odd priority). It is done
 * about one round and one answer time after it arrives, as its own rule
 * allows, instead of one row per round (7 rows among 200 busy sellers would
 * otherwise take 7 rounds); and when hundreds of small uploads arrive at once,
 * every seller's first row still comes before any seller's second one.
 *
 * Rows that already hold a permit slot wake at PRIORITY.DUE_ROW (see queue.ts),
 * ahead of every new row.
 */
import { QUEUE_NAME, sellerKeys } from '../keys.js';
import { PRIORITY } from '../queue.js';
import type { RedisClient } from '../redis.js';

/** Uploads of at most this many rows go into one round whole (see above). */
export const SMALL_UPLOAD = 10;
/** BullMQ's largest priority number. */
export const MAX_PRIORITY = 2_097_151;
/** BullMQ's prioritized score: priority * 2^32 + insertion counter. */
const SCORE_PER_PRIORITY = 0x1_0000_0000;

/** The even priority that starts the round `priority` is in. */
const roundOf = (priority: number) => priority - (priority % 2);

/**
 * The first priority of a new upload (pure): the even priority of its first round.
 * @param virtualTime the lowest priority of the new rows still waiting, undefined if none
 * @param sellerTail the last priority handed to this seller, undefined if none is known
 */
export function firstPriority(virtualTime: number | undefined, sellerTail: number | undefined): number {
  const now = roundOf(Math.max(PRIORITY.NEW_ROW, virtualTime ?? PRIORITY.NEW_ROW));
  // a seller whose rows are all served (tail behind the round) starts in the current round
  const start = sellerTail !== undefined && sellerTail >= now ? roundOf(sellerTail) + 2 : now;
  return Math.min(roundOf(MAX_PRIORITY), start);
}

/**
 * The priority of the row at `index` (0-based) of an upload of `rows` rows starting
 * at `start`: one row per round, or a small upload whole in its first round (its
 * first row with the round's, the rest right behind them); capped at BullMQ's maximum.
 */
export const rowPriority = (start: number, index: number, rows: number) =>
  Math.min(MAX_PRIORITY, rows <= SMALL_UPLOAD ? start + Math.min(index, 1) : start + 2 * index);

/** The queue's virtual time: the lowest priority among new rows still waiting, if any. */
export async function virtualTime(redis: RedisClient, queuePrefix: string): Promise<number | undefined> {
  // BullMQ's prioritized set of the queue (in the queue's own slot on a cluster)
  const prioritized = `${queuePrefix}:${QUEUE_NAME}:prioritized`;
  const head = await redis.zrangebyscore(prioritized, PRIORITY.NEW_ROW * SCORE_PER_PRIORITY, '+inf', 'WITHSCORES', 'LIMIT', 0, 1);
  return head[1] === undefined ? undefined : Math.floor(Number(head[1]) / SCORE_PER_PRIORITY);
}

/**
 * Reserves `count` priorities for a new upload of `sellerId` and returns the first.
 * Not atomic across concurrent uploads: a race costs only a little fairness, never a row.
 */
export async function reservePriorities(
  deps: { redis: RedisClient; queuePrefix: string; ns: string; retentionS: number },
  sellerId: string,
  count: number,
  home: string = sellerId,
): Promise<number> {
  const tailKey = sellerKeys(deps.ns, sellerId, home).tail;
  const [vt, tail] = await Promise.all([virtualTime(deps.redis, deps.queuePrefix), deps.redis.get(tailKey)]);
  const start = firstPriority(vt, tail === null ? undefined : Number(tail));
  await deps.redis.set(tailKey, rowPriority(start, count - 1, count), 'EX', deps.retentionS);
  return start;
}
