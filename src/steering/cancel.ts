/**
 * Cancelling an upload (cli.md "Steering uploads"): its rows not yet sent end
 * `cancelled`; a row whose call is in flight ends as its answer says. A row
 * waiting to be sent again after a call that got no answer ends `cancelled` too,
 * with a reason that says the marketplace may have it (cancelDetailOf).
 *
 * - `cancelledAt` on the upload's hash and `cancel:<uploadId>` (ms) in the steering hash (steer-key.ts):
 *   every worker process reads the set with the pauses (PauseWatch, every
 *   PAUSE_POLL_MS) and checks it before a row asks for a permit and again right
 *   before its call leaves; such a row is counted `cancelled` and sends nothing.
 * - The command writes both, waits until every process has read them, and only
 *   then removes the upload's waiting and delayed jobs (BullMQ's job.remove,
 *   which refuses a job locked by a worker) and counts each removed row
 *   `cancelled`. A job a worker has just taken is therefore either refused by
 *   remove (the worker sees the flag and counts it) or was past its last check
 *   before the flag was visible (its call was already granted): no third case
 *   sends a call after the command returns. Counting is once per row, first
 *   outcome wins, so a row counted by both is counted once.
 */
import type { Config } from '../config.js';
import { namespaceOf, rowMember, uploadIndexKey } from '../keys.js';
import type { RedisClient } from '../redis.js';
import type { QueueSet } from '../queue.js';
import { jobIdFor } from '../queue.js';
import { openRows } from '../upload/lost-rows.js';
import type { PermitLimiter } from '../rate-limit/limiter.js';
import { PAUSE_POLL_MS } from './pauses.js';
import { CANCEL, steerKey } from './steer-key.js';
import { uploadKeysOf } from '../seller-home.js';


/** The seller of an upload, from the upload index; undefined when unknown. */
export async function sellerOfUpload(redis: RedisClient, ns: string, uploadId: string): Promise<string | undefined> {
  const members = await redis.zrange(uploadIndexKey(ns), '0', '-1');
  const hit = members.find((m) => m.endsWith(`/${uploadId}`));
  return hit?.slice(0, hit.length - uploadId.length - 1);
}

export const cancelDetail = { status: 'cancelled', outcome: 'cancelled', reason: 'cancelled before it was sent' } as const;

/**
 * A row cancelled after a call of it left and no usable answer came back (a timeout,
 * a dropped connection, a 5xx, or a worker that died mid-call): the marketplace may
 * have registered it, and no call may leave to ask. Sending the same file again asks,
 * under the row's own key.
 */
export const cancelAfterCallDetail = {
  status: 'cancelled', outcome: 'cancelled',
  reason: 'cancelled after a call that got no answer: the marketplace may have registered it (upload the file again to find out; nothing is registered twice)',
} as const;

/**
 * How a cancelled row is told: a row whose call may have left (`failingSince` is set
 * once a call got no usable answer; a stalled job was held by a worker that stopped,
 * maybe mid-call; `calledBefore`: an earlier job of the row was cancelled so) is not
 * said to be unsent.
 */
export function cancelDetailOf(job: { data: { failingSince?: number; calledBefore?: true }; stalledCounter?: number }): typeof cancelDetail | typeof cancelAfterCallDetail {
  return job.data.failingSince !== undefined || job.data.calledBefore === true || (job.stalledCounter ?? 0) > 0 ? cancelAfterCallDetail : cancelDetail;
}

/**
 * Cancels the upload. Returns undefined for an unknown upload, else how many rows
 * this call counted cancelled (the workers count the ones they hold); `alreadyDone`
 * when every row had already ended (nothing is changed then).
 */
export async function cancelUpload(
  deps: { redis: RedisClient; config: Config; queues: QueueSet; limiter: PermitLimiter; now: () => number },
  uploadId: string,
): Promise<{ sellerId: string; removed: number; alreadyDone?: true } | undefined> {
  const { redis, config, queues, limiter } = deps;
  const ns = namespaceOf(config.queuePrefix);
  const sellerId = await sellerOfUpload(redis, ns, uploadId);
  if (!sellerId) return undefined;
  const keys = await uploadKeysOf(redis, ns, sellerId, uploadId);
  const counters = await redis.hmget(keys.upload, 'total', 'registered', 'duplicate', 'failed', 'cancelled', 'cancelledAt');
  if (counters[0] === null) return undefined;
  // every row already ended: nothing to stop, and the upload keeps its state (done, not cancelled)
  const [total, ...ended] = counters.slice(0, 5).map(Number) as [number, ...number[]];
  if (counters[5] === null && ended.reduce((a, b) => a + b, 0) >= total) return { sellerId, removed: 0, alreadyDone: true };
  const now = deps.now();
  await redis.hsetnx(keys.upload, 'cancelledAt', now);
  await redis.hset(steerKey(ns), CANCEL + uploadId, now);
  // an entry lives as long as the upload's counters
  const old = Object.entries(await redis.hgetall(steerKey(ns))).filter(([k, v]) => k.startsWith(CANCEL) && Number(v) < now - config.uploadRetentionS * 1000);
  if (old.length > 0) await redis.hdel(steerKey(ns), ...old.map(([k]) => k));
  // every worker process has read the flag: from here on none sends a row of it
  await new Promise((r) => setTimeout(r, PAUSE_POLL_MS + 100));

  const { open } = await openRows(redis, config, ns, sellerId, uploadId);
  const queuePrefix = (await redis.hget(keys.upload, 'queue')) ?? config.queuePrefix;
  const queue = queues.get(queuePrefix);
  let removed = 0;
  for (let i = 0; i < open.length; i += 100) {
    await Promise.all(open.slice(i, i + 100).map(async (row) => {
      const job = await queue.getJob(jobIdFor(uploadId, row));
      if (!job) return;
      const state = await job.getState();
      if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized' && state !== 'waiting-children') return;
      try {
        await job.remove();
      } catch {
        return; // a worker took it a moment ago: it sees the flag and counts it
      }
      const counts = await limiter.complete(
        { sellerId, uploadId, row, member: rowMember(uploadId, row), sendId: '' },
        { outcome: 'cancelled', detail: cancelDetailOf(job), wantNextPermit: false },
        config.uploadRetentionS,
      );
      if (counts.counted) removed++;
    }));
  }
  return { sellerId, removed };
}

/**
 * The same file uploaded again after a cancel: its cancelled rows are counted
 * out again and returned, so that the producer enqueues exactly them (under
 * their own job ids and idempotency keys: nothing already registered is sent).
 * Each row maps to whether it was cancelled after a call that got no answer: its
 * new job carries that, so that a cancel before it is sent again still says the
 * marketplace may have it (it may: the key is the same).
 */
export async function reopenCancelled(
  redis: RedisClient, config: Config, sellerId: string, uploadId: string, queues: QueueSet,
): Promise<Map<number, boolean>> {
  const ns = namespaceOf(config.queuePrefix);
  const keys = await uploadKeysOf(redis, ns, sellerId, uploadId);
  const reopened = new Map<number, boolean>();
  if (!(await redis.hget(keys.upload, 'cancelledAt'))) return reopened;
  for (const [row, v] of Object.entries(await redis.hgetall(keys.rows))) {
    try {
      const detail = JSON.parse(v) as { status?: string; reason?: string };
      if (detail.status === 'cancelled') reopened.set(Number(row), detail.reason === cancelAfterCallDetail.reason);
    } catch {
      // not an outcome this project wrote: left as it is
    }
  }
  const cancelled = [...reopened.keys()];
  const queue = queues.get((await redis.hget(keys.upload, 'queue')) ?? config.queuePrefix);
  // a job a worker finished as cancelled keeps its id: gone first, so that the same id can be added again
  for (const row of cancelled) await queue.remove(jobIdFor(uploadId, row)).catch(() => 0);
  // a new round: its end gets a finished line and an event of its own (webhooks.ts names it by `reopened`)
  const tx = redis.multi().hdel(keys.upload, 'cancelledAt', 'finishedLogged').hincrby(keys.upload, 'reopened', 1);
  if (cancelled.length > 0) tx.hdel(keys.rows, ...cancelled.map(String)).hincrby(keys.upload, 'cancelled', -cancelled.length);
  await tx.exec();
  await redis.hdel(steerKey(ns), CANCEL + uploadId);
  // every worker process has read that the upload is not cancelled any more before
  // its rows come again: one taken on an older view would be counted cancelled anew
  if (cancelled.length > 0) await new Promise((r) => setTimeout(r, PAUSE_POLL_MS + 100));
  return reopened;
}

/**
 * Cancelled uploads that are now finished and whose `upload finished` line is not
 * written yet: each is returned once across every pool (HSETNX), with its counts.
 */
export async function finishedCancels(redis: RedisClient, ns: string, sinceMs: number): Promise<Array<Record<string, number | string>>> {
  const ids = Object.entries(await redis.hgetall(steerKey(ns)))
    .filter(([k, v]) => k.startsWith(CANCEL) && Number(v) >= sinceMs)
    .map(([k]) => k.slice(CANCEL.length));
  if (ids.length === 0) return [];
  const index = await redis.zrange(uploadIndexKey(ns), '0', '-1');
  const out: Array<Record<string, number | string>> = [];
  for (const uploadId of ids) {
    const member = index.find((m) => m.endsWith(`/${uploadId}`));
    if (!member) continue;
    const sellerId = member.slice(0, member.length - uploadId.length - 1);
    const key = (await uploadKeysOf(redis, ns, sellerId, uploadId)).upload;
    const h = await redis.hgetall(key);
    const n = (k: string) => Number(h[k] ?? 0);
    if (h.finishedLogged || n('registered') + n('duplicate') + n('failed') + n('cancelled') < n('total')) continue;
    if ((await redis.hsetnx(key, 'finishedLogged', 1)) !== 1) continue;
    out.push({ sellerId, uploadId, total: n('total'), registered: n('registered'), duplicate: n('duplicate'), failed: n('failed'), cancelled: n('cancelled') });
  }
  return out;
}
