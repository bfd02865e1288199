/**
 * The producer: one upload's valid rows -> one BullMQ job each, added in bulk,
 * with the upload's counters created first so that workers can count every row,
 * and each row's priority placing it in a fair round over all sellers (fair-share.ts).
 * The uploadId is derived from the seller and the file's bytes: the same file
 * uploaded again for the same seller enqueues nothing.
 */
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Config } from '../config.js';
import type { LoadedSheet } from '../excel/load-sheet.js';
import { namespaceOf, uploadIndexKey, uploadKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';
import { jobIdFor, jobOptions, type RegistrationJob } from '../queue.js';
import { reservePriorities, rowPriority } from './fair-share.js';

export function uploadIdFor(sellerId: string, fileSha256: string): string {
  return createHash('sha256').update(`${sellerId}\n${fileSha256}`).digest('hex').slice(0, 24);
}

export interface EnqueueResult {
  uploadId: string;
  enqueued: number;
  alreadyUploaded: boolean;
}

const BULK = 250;

export async function enqueueUpload(
  deps: { redis: RedisClient; queue: Queue<RegistrationJob>; config: Config; now: () => number },
  sellerId: string,
  sheet: LoadedSheet,
): Promise<EnqueueResult> {
  const { redis, queue, config } = deps;
  const uploadId = uploadIdFor(sellerId, sheet.sha256);
  const ns = namespaceOf(config.queuePrefix);
  const keys = uploadKeys(ns, sellerId, uploadId);

  if ((await redis.hget(keys.upload, 'enqueued')) === '1') return { uploadId, enqueued: 0, alreadyUploaded: true };

  const createdAt = deps.now();
  const retention = config.uploadRetentionS;
  await redis
    .multi()
    .hset(keys.upload, {
      sellerId, uploadId, file: sheet.file, rows: sheet.rows, total: sheet.valid.length,
      invalid: new Set(sheet.errors.map((e) => e.row)).size, createdAt,
    })
    .expire(keys.upload, retention)
    .set(keys.sheet, JSON.stringify({ raw: sheet.raw, errors: sheet.errors }), 'EX', retention)
    .exec();
  await redis.zadd(uploadIndexKey(ns), createdAt, `${sellerId}/${uploadId}`);
  await redis.zremrangebyscore(uploadIndexKey(ns), '-inf', createdAt - retention * 1000);
  await redis.expire(uploadIndexKey(ns), retention);

  const options = jobOptions(config);
  // each row's place in the fair round over all sellers (fair-share.ts)
  const first = await reservePriorities({ redis, queuePrefix: config.queuePrefix, ns, retentionS: retention }, sellerId, sheet.valid.length);
  for (let i = 0; i < sheet.valid.length; i += BULK) {
    await queue.addBulk(
      sheet.valid.slice(i, i + BULK).map(({ row, product }, j) => ({
        name: 'register',
        data: { sellerId, uploadId, row, product },
        opts: { ...options, priority: rowPriority(first, i + j, sheet.valid.length), jobId: jobIdFor(uploadId, row) },
      })),
    );
  }
  await redis.hset(keys.upload, 'enqueued', 1);
  return { uploadId, enqueued: sheet.valid.length, alreadyUploaded: false };
}
