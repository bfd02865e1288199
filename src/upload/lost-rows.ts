/**
 * Rows an upload will never finish: enqueued, with no outcome recorded and no
 * job left in the queue. A Redis that restarted from an AOF missing its last
 * second, or a failover to a replica that was behind, can lose an upload's jobs
 * while its counters survive; without this, `status --wait` would wait for them
 * forever. Status counts them as lost, so the upload ends and the seller can
 * upload those rows again (the report lists them as pending).
 */
import type { Config } from '../config.js';
import { QUEUE_NAME } from '../keys.js';
import { jobIdFor } from '../queue-shards.js';
import type { RedisClient } from '../redis.js';
import { uploadKeysOf } from '../seller-home.js';

/**
 * An upload's valid rows that have no outcome recorded yet, and the key of a
 * row's job on the upload's own shard (uploads made before sharding recorded
 * none: QUEUE_PREFIX). Read-only.
 */
export async function openRows(
  redis: RedisClient, config: Config, ns: string, sellerId: string, uploadId: string,
): Promise<{ open: number[]; jobKey: (row: number) => string }> {
  const keys = await uploadKeysOf(redis, ns, sellerId, uploadId);
  const [sheetJson, queuePrefix] = await Promise.all([redis.get(keys.sheet), redis.hget(keys.upload, 'queue')]);
  const prefix = queuePrefix ?? config.queuePrefix;
  const jobKey = (row: number) => `${prefix}:${QUEUE_NAME}:${jobIdFor(uploadId, row)}`;
  if (!sheetJson) return { open: [], jobKey };
  const sheet = JSON.parse(sheetJson) as { raw: Array<{ row: number }>; errors: Array<{ row: number }> };
  const invalid = new Set(sheet.errors.map((e) => e.row));
  const valid = sheet.raw.map((r) => r.row).filter((row) => !invalid.has(row));
  if (valid.length === 0) return { open: [], jobKey };
  const outcomes = await redis.hmget(keys.rows, ...valid.map(String));
  return { open: valid.filter((_, i) => outcomes[i] === null), jobKey };
}

/**
 * An upload still being enqueued may lack jobs for a moment: only judged after this long (ms).
 * The producer's `enqueuing` key lives this long at most (keys.ts).
 */
export const ENQUEUE_GRACE_MS = 60_000;

/**
 * The row numbers of an unfinished upload that no job will ever finish.
 * Read-only; one pipeline of EXISTS on the queue's hash tag (one slot on a cluster).
 * While a producer adds rows (its `enqueuing` key, whose TTL runs on Redis's clock), none
 * is lost. An upload a producer never marked enqueued is otherwise judged once it is
 * ENQUEUE_GRACE_MS old by this host's clock: a host behind the producer's only judges it
 * later, since the key already covered the producer's own grace.
 * @param ns the key namespace (namespaceOf(QUEUE_PREFIX))
 * @param nowMs the host's clock
 */
export async function lostRows(redis: RedisClient, config: Config, ns: string, sellerId: string, uploadId: string, nowMs: number): Promise<number[]> {
  const keys = await uploadKeysOf(redis, ns, sellerId, uploadId);
  const [[, enqueuing], [, fields]] = (await redis.multi().exists(keys.enqueuing).hmget(keys.upload, 'enqueued', 'createdAt').exec()) as [[null, number], [null, Array<string | null>]];
  if (enqueuing === 1) return [];
  const [enqueued, createdAt] = fields;
  if (enqueued !== '1' && nowMs - Number(createdAt ?? nowMs) < ENQUEUE_GRACE_MS) return [];
  const { open, jobKey } = await openRows(redis, config, ns, sellerId, uploadId);
  if (open.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const row of open) pipeline.exists(jobKey(row));
  const replies = (await pipeline.exec()) ?? [];
  // a row counted meanwhile (its job finished and was removed between the two reads) is not lost
  const gone = open.filter((_, i) => replies[i]?.[1] === 0);
  if (gone.length === 0) return [];
  const again = await redis.hmget(keys.rows, ...gone.map(String));
  return gone.filter((_, i) => again[i] === null);
}
