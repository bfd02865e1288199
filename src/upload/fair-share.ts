/**
 * A fair share of a saturated pool for every seller, from BullMQ's own job
 * priorities (start-time fair queuing, no scheduler of our own).
 *
 * BullMQ serves its prioritized set lowest priority number first, and in the
 * order of insertion within one number. The new rows are served in rounds of
 * ROUND priorities. Round r (a multiple of ROUND) holds, in this order:
 * - r - 2: the first row of each seller that arrived with nothing waiting;
 * - r - 1: the rest of those sellers' small uploads;
 * - r: one row of each seller that has more (its next);
 * - r + 1: the rest of the round's other small uploads.
 * A new upload's k-th row (0-based, k >= 1) gets priority `start + ROUND * k`,
 * where `start` is the queue's virtual time: the round the oldest new row still
 * waiting is in. So when 200 sellers upload at once, every seller's first row
 * comes before any seller's second one, and a seller who arrives later starts in
 * the current round, not behind everyone's backlog. A seller who still has rows
 * waiting continues in the round after its own last one (`tail`), so two uploads
 * of one seller do not earn it two shares.
 *
 * A seller that arrives with nothing waiting goes ahead of the round being
 * served (as a fair queue serves a new flow's first packet before the old
 * flows' next ones, e.g. fq_codel's new-flows list): its first row waits behind
 * no other seller's backlog, only behind other newcomers. A small upload (at
 * most SMALL_UPLOAD rows) goes into one round whole: its first row with the
 * round's first rows, the rest right behind them. So a 7-row seller arriving at
 * a pool busy with 200 big uploads is done about one answer time after its rows
 * are queued, as its own rule allows; and when hundreds of small uploads arrive
 * at once, every seller's first row still comes before any seller's second one.
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

/** Priorities per round (see above). */
export const ROUND = 4;

/** The round (a multiple of ROUND) priority `priority` belongs to: r - 2 .. r + 1 are round r's. */
const roundOf = (priority: number) => ROUND * Math.floor((priority + 2) / ROUND);

/** The round of the first new rows: its newcomers' priority r - 2 is NEW_ROW, just behind the due rows. */
const FIRST_ROUND = roundOf(PRIORITY.NEW_ROW);

/** Where a new upload starts: its round, and whether its seller had nothing waiting (a newcomer). */
export interface UploadStart {
  start: number;
  newcomer: boolean;
}

/**
 * Where a new upload starts (pure).
 * @param virtualTime the lowest priority of the new rows still waiting, undefined if none
 * @param sellerTail the last priority handed to this seller, undefined if none is known
 */
export function firstPriority(virtualTime: number | undefined, sellerTail: number | undefined): UploadStart {
  const now = Math.max(FIRST_ROUND, roundOf(virtualTime ?? PRIORITY.NEW_ROW));
  // a seller whose rows are all served (tail behind the round) starts in the current round, as a newcomer
  if (sellerTail === undefined || roundOf(sellerTail) < now) return { start: now, newcomer: true };
  return { start: Math.min(roundOf(MAX_PRIORITY) - ROUND, roundOf(sellerTail) + ROUND), newcomer: false };
}

/**
 * The priority of the row at `index` (0-based) of an upload of `rows` rows starting
 * at `at`: one row per round, or a small upload whole in its first round (its
 * first row with the round's, the rest right behind them), a newcomer's first
 * row (or small upload) ahead of the round; capped at BullMQ's maximum.
 */
export function rowPriority(at: UploadStart, index: number, rows: number): number {
  const { start, newcomer } = at;
  const first = newcomer ? start - 2 : start;
  const p = rows <= SMALL_UPLOAD ? first + Math.min(index, 1) : index === 0 ? first : start + ROUND * index;
  return Math.min(MAX_PRIORITY, p);
}

/** The queue's virtual time: the lowest priority among new rows still waiting, if any. */
export async function virtualTime(redis: RedisClient, queuePrefix: string): Promise<number | undefined> {
  // BullMQ's prioritized set of the queue (in the queue's own slot on a cluster)
  const prioritized = `${queuePrefix}:${QUEUE_NAME}:prioritized`;
  const head = await redis.zrangebyscore(prioritized, PRIORITY.NEW_ROW * SCORE_PER_PRIORITY, '+inf', 'WITHSCORES', 'LIMIT', 0, 1);
  return head[1] === undefined ? undefined : Math.floor(Number(head[1]) / SCORE_PER_PRIORITY);
}

/**
 * Reserves `count` priorities for a new upload of `sellerId` and returns where it starts,
 * after one round trip: the seller's new tail is written behind it (`recorded`), so the
 * upload's rows need not wait for that write, which goes before them on the connection.
 * Not atomic across concurrent uploads: a race costs only a little fairness, never a row.
 */
export async function reservePriorities(
  deps: { redis: RedisClient; queuePrefix: string; ns: string; retentionS: number },
  sellerId: string,
  count: number,
  home: string = sellerId,
): Promise<UploadStart & { recorded: Promise<unknown> }> {
  const tailKey = sellerKeys(deps.ns, sellerId, home).tail;
  const [vt, tail] = await Promise.all([virtualTime(deps.redis, deps.queuePrefix), deps.redis.get(tailKey)]);
  const at = firstPriority(vt, tail === null ? undefined : Number(tail));
  // the tail is in the upload's round at least: a newcomer's next upload, while this one waits, is no newcomer
  const recorded = deps.redis.set(tailKey, Math.max(at.start, rowPriority(at, count - 1, count)), 'EX', deps.retentionS);
  // awaited by the caller; until then, a failure is not an unhandled rejection
  recorded.catch(() => undefined);
  return { ...at, recorded };
}
