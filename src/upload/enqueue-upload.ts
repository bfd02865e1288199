/**
 * The producer: one upload's valid rows -> one BullMQ job each, added in bulk,
 * with the upload's counters created first so that workers can count every row,
 * and each row's priority placing it in a fair round over all sellers (fair-share.ts).
 * The uploadId is derived from the seller and the file's bytes: the same file
 * uploaded again for the same seller enqueues nothing.
 */
import { createHash } from 'node:crypto';
import type { Config } from '../config.js';
import type { LoadedSheet } from '../excel/load-sheet.js';
import { namespaceOf, sellerKeys, unnotifiedKey, uploadIndexKey, uploadKeys, type SellerKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';
import { jobIdFor, jobNameFor, jobOptions, type QueueSet } from '../queue.js';
import { queuedRow } from '../queued-row.js';
import { queuesKey } from '../queue-shards.js';
import { pinHome, uploadKeysOf } from '../seller-home.js';
import { reservePriorities, rowPriority, type UploadStart } from './fair-share.js';
import { bringRowsForward, configuredRule, deferralMs, noteDeferral, ruleForDeferral, ruleRaised } from './deferral.js';
import { reopenCancelled } from '../steering/cancel.js';
import { ENQUEUE_GRACE_MS } from './lost-rows.js';

export function uploadIdFor(sellerId: string, fileSha256: string): string {
  return createHash('sha256').update(`${sellerId}\n${fileSha256}`).digest('hex').slice(0, 24);
}

/** Whether the upload was enqueued before (its file uploaded for the seller): read-only. */
export async function uploadedBefore(redis: RedisClient, ns: string, sellerId: string, uploadId: string): Promise<boolean> {
  return (await redis.hget((await uploadKeysOf(redis, ns, sellerId, uploadId)).upload, 'enqueued')) === '1';
}

export interface EnqueueResult {
  uploadId: string;
  enqueued: number;
  alreadyUploaded: boolean;
  /** The queue (shard) prefix the rows went to; undefined when nothing was enqueued. */
  queuePrefix?: string;
}

const BULK = 250;

/**
 * What the reports read back (report/upload-report.ts): every row as written,
 * the row errors, and the sheet's columns in order. Uploads stored before the
 * extra columns have neither `columns` nor `extra`.
 */
function storedSheet(sheet: LoadedSheet): string {
  const raw = sheet.raw.map(({ row, values, extra }) => (Object.keys(extra).length > 0 ? { row, values, extra } : { row, values }));
  return JSON.stringify({ raw, errors: sheet.errors, columns: sheet.columns });
}

export async function enqueueUpload(
  deps: { redis: RedisClient; queues: QueueSet; config: Config; now: () => number },
  sellerId: string,
  sheet: LoadedSheet,
): Promise<EnqueueResult> {
  const { redis, queues, config } = deps;
  const uploadId = uploadIdFor(sellerId, sheet.sha256);
  const ns = namespaceOf(config.queuePrefix);
  // on a cluster, the shard the seller is pinned to: its keys carry the shard's tag (seller-home.ts)
  const { home, queue: prefix } = await pinHome(redis, config, sellerId, queues.prefixes);
  const keys = uploadKeys(ns, sellerId, uploadId, home);
  const limiterKeys = sellerKeys(ns, sellerId, home);

  if ((await redis.hget(keys.upload, 'enqueued')) === '1') {
    // the same file after a cancel: exactly its cancelled rows go again (steering/cancel.ts).
    // From the moment their outcomes are cleared until their jobs are back, status must not
    // take them for lost: the `enqueuing` key says rows are being added
    await redis.set(keys.enqueuing, '1', 'PX', ENQUEUE_GRACE_MS);
    const again = await reopenCancelled(redis, config, sellerId, uploadId, queues);
    if (again.size === 0) {
      await redis.del(keys.enqueuing);
      return { uploadId, enqueued: 0, alreadyUploaded: true };
    }
    const queue = (await redis.hget(keys.upload, 'queue')) ?? config.queuePrefix;
    const rows = sheet.valid.filter((r) => again.has(r.row));
    const [first, rule] = await Promise.all([
      reservePriorities({ redis, queuePrefix: queue, ns, retentionS: config.uploadRetentionS }, sellerId, rows.length, home),
      redis.get(limiterKeys.rule),
    ]);
    await addRows(deps, queue, { sellerId, home, keys: limiterKeys, rule }, uploadId, rows, first, again);
    await Promise.all([first.recorded, redis.del(keys.enqueuing), redis.zadd(unnotifiedKey(ns), deps.now(), uploadId)]);
    return { uploadId, enqueued: rows.length, alreadyUploaded: true, queuePrefix: queue };
  }

  // The same file uploaded twice at once (a double submit, two operators): one upload
  // enqueues it, the other waits for that and then counts as the file uploaded again,
  // with nothing enqueued (without this claim both reported every row enqueued, and
  // reserved the seller's rounds twice). The claim is the `enqueuing` mark, which lapses
  // after ENQUEUE_GRACE_MS when its producer died midway: then the rows go from here.
  if ((await redis.set(keys.enqueuing, '1', 'PX', ENQUEUE_GRACE_MS, 'NX')) === null) {
    await enqueuedElsewhere(redis, keys);
    return enqueueUpload(deps, sellerId, sheet);
  }

  // the seller's shard is recorded with the upload, which stays on it for its whole life.
  // These writes are independent of each other and go out together (one round trip, not
  // nine): with 200 uploads at once, each awaited in turn held every upload's rows back
  // by nine turns of the producer's connection behind everyone else's
  const createdAt = deps.now();
  const retention = config.uploadRetentionS;
  const [, first, rule] = await Promise.all([
    redis
      .multi()
      .hset(keys.upload, {
        sellerId, uploadId, file: sheet.file, rows: sheet.rows, total: sheet.valid.length,
        invalid: new Set(sheet.errors.map((e) => e.row)).size, createdAt, queue: prefix,
      })
      .expire(keys.upload, retention)
      .set(keys.sheet, storedSheet(sheet), 'EX', retention)
      // until the rows are all in the queue, none is judged lost (upload/lost-rows.ts)
      .set(keys.enqueuing, '1', 'PX', ENQUEUE_GRACE_MS)
      .exec(),
    reservePriorities({ redis, queuePrefix: prefix, ns, retentionS: retention }, sellerId, sheet.valid.length, home),
    // the seller's rule in force, which its rows beyond the first window are deferred by
    redis.get(limiterKeys.rule),
    redis.zadd(uploadIndexKey(ns), createdAt, `${sellerId}/${uploadId}`),
    redis.zremrangebyscore(uploadIndexKey(ns), '-inf', createdAt - retention * 1000),
    redis.expire(uploadIndexKey(ns), retention),
    // the workers serve every queue an upload went to, whatever their own QUEUE_SHARDS
    redis.zadd(queuesKey(ns), createdAt, prefix),
    redis.zremrangebyscore(queuesKey(ns), '-inf', createdAt - retention * 1000),
    redis.expire(queuesKey(ns), retention),
  ]);

  await addRows(deps, prefix, { sellerId, home, keys: limiterKeys, rule }, uploadId, sheet.valid, first);
  // every row is in its queue: the upload is marked enqueued, and the pool tells
  // UPLOAD_WEBHOOK_URL once it is finished (steering/webhooks.ts), which reads only its counts
  await Promise.all([first.recorded, redis.multi().hset(keys.upload, 'enqueued', 1).del(keys.enqueuing).exec(), redis.zadd(unnotifiedKey(ns), createdAt, uploadId)]);
  return { uploadId, enqueued: sheet.valid.length, alreadyUploaded: false, queuePrefix: prefix };
}

/**
 * One job per row on the upload's queue, each at its place in the fair round over all
 * sellers (fair-share.ts), from where `first` says it starts, and rows beyond the seller's
 * first window deferred to their own window (deferral.ts). The first row goes on its own
 * ahead of the rest: when many sellers upload at once, every seller's first row is in
 * the queue before the bulk of anyone's rows, and the pool starts on them while the
 * rest are still being added. The rest of the first window goes next, in an addBulk of
 * its own: in one with up to 200 deferred rows behind it, a 500-row upload's second row
 * reached the API 39-67 ms after its first, and 17-23 ms in its own (bench, single-500).
 * A raise of the seller's rule that lands while the rows are added is checked once they
 * are all in the queue. `calledBefore`: true for a row whose call may have left under an
 * earlier job of it (steering/cancel.ts, reopenCancelled); its job says so.
 */
async function addRows(
  deps: { redis: RedisClient; queues: QueueSet; config: Config },
  prefix: string, seller: { sellerId: string; home: string; keys: SellerKeys; rule: string | null }, uploadId: string,
  rows: LoadedSheet['valid'], first: UploadStart, calledBefore?: ReadonlyMap<number, boolean>,
): Promise<void> {
  if (rows.length === 0) return;
  const { sellerId, home, keys } = seller;
  const rule = ruleForDeferral(seller.rule, deps.config);
  const queue = deps.queues.get(prefix);
  const options = jobOptions(deps.config);
  const job = ({ row, product, attributes }: LoadedSheet['valid'][number], index: number) => {
    const delay = deferralMs(index, rule);
    return {
      // permit-next.lua reads the row's seller and home from the name, its upload and row from the id
      name: jobNameFor(sellerId, home),
      // this key order: a job named otherwise (enqueued by an earlier version) is read from the front of its JSON
      data: {
        sellerId, uploadId, row, ...(home !== sellerId ? { home } : {}), product,
        ...(Object.keys(attributes).length > 0 ? { attributes } : {}), ...(calledBefore?.get(row) ? { calledBefore: true as const } : {}),
      },
      opts: { ...options, priority: rowPriority(first, index, rows.length), jobId: jobIdFor(uploadId, row), ...(delay > 0 ? { delay } : {}) },
    };
  };
  // the first row alone, then the rest of its first window, then the deferred rows BULK at a time
  await Promise.all([
    noteDeferral(deps.redis, keys, rule, prefix, rows.map((r) => jobIdFor(uploadId, r.row))),
    queue.addBulk([job(rows[0]!, 0)]),
  ]);
  const firstWindow = Math.min(rows.length, rule.limit);
  for (const [from, to] of chunks(1, firstWindow, BULK).concat(chunks(firstWindow, rows.length, BULK))) {
    await queue.addBulk(rows.slice(from, to).map((r, j) => job(r, from + j)));
  }
  if (rows.length <= rule.limit) return;
  // a raise that landed while the deferred rows were being added could not bring forward
  // those not yet in the queue (deferral.ts): they are all there now
  if (ruleRaised(seller.rule, await deps.redis.get(keys.rule), configuredRule(deps.config))) {
    await bringRowsForward(deps.redis, keys, deps.queues, rows.slice(rule.limit).map((r) => queuedRow(prefix, jobIdFor(uploadId, r.row))));
  }
}

/** [from, to) in pieces of at most `size`. Pure. */
function chunks(from: number, to: number, size: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = from; i < to; i += size) out.push([i, Math.min(to, i + size)]);
  return out;
}

/** Until the upload another producer claimed is enqueued, or its claim lapsed (that producer died). */
async function enqueuedElsewhere(redis: RedisClient, keys: { upload: string; enqueuing: string }): Promise<void> {
  for (;;) {
    const [enqueued, claimed] = await Promise.all([redis.hget(keys.upload, 'enqueued'), redis.exists(keys.enqueuing)]);
    if (enqueued === '1' || claimed === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
