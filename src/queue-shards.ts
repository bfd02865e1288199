/**
 * Queue shards (QUEUE_SHARDS): the sellers are spread over that many BullMQ
 * queues, each under its own hash tag, so that a Redis Cluster places them on
 * different masters. Shard i's tag is chosen so that its slot falls in the
 * i-th of n equal slot ranges: a cluster that splits its slots evenly over
 * its masters (as `redis-cli --cluster create` does) then gets the shards
 * evenly too. One shard is the plain QUEUE_PREFIX, as before sharding.
 * A seller's shard follows from its id; an upload records its shard's prefix,
 * so a change of QUEUE_SHARDS moves new uploads only. Pure.
 */

import type { Config } from './config.js';

const SLOTS = 16384;

/** CRC16/XMODEM, as Redis Cluster computes key slots. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The cluster slot of `key` (its hash tag's, when it has a non-empty one). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(new TextEncoder().encode(key)) % SLOTS;
}

/**
 * The queue prefixes of `shards` shards. `queuePrefix` must hold a hash tag in
 * braces when shards > 1 (checked by config).
 */
export function shardPrefixes(queuePrefix: string, shards: number): string[] {
  if (shards <= 1) return [queuePrefix];
  const m = /\{([^}]+)\}/.exec(queuePrefix);
  if (!m) throw new Error(`QUEUE_PREFIX ${queuePrefix} has no hash tag`);
  const [whole, tag] = m as unknown as [string, string];
  const at = m.index;
  const prefixes: string[] = [];
  for (let i = 0; i < shards; i++) {
    for (let k = 0; ; k++) {
      const candidate = `${queuePrefix.slice(0, at)}{${tag}#${i}${k === 0 ? '' : `.${k}`}}${queuePrefix.slice(at + whole.length)}`;
      if (Math.floor((keySlot(candidate) * shards) / SLOTS) === i) {
        prefixes.push(candidate);
        break;
      }
    }
  }
  return prefixes;
}

/** The shard of a seller's new uploads. */
export function shardOf(sellerId: string, prefixes: readonly string[]): string {
  return prefixes[crc16(new TextEncoder().encode(sellerId)) % prefixes.length]!;
}

/**
 * zset of every queue prefix an upload was enqueued on within the upload
 * retention, scored by its last upload (ms): the workers serve them all.
 */
export const queuesKey = (ns: string) => `${ns}:queues`;

/** BullMQ job ids may not contain ':'; the row's Idempotency-Key does (`{uploadId}:{row}`). */
export const jobIdFor = (uploadId: string, row: number) => `${uploadId}-${row}`;

/**
 * A row's job name: `register:{sellerId}`, and `:{home}` when its keys carry another
 * tag (seller-home.ts). With the job's id (jobIdFor), it names the row for
 * permit-next.lua without the job's data: a row's data holds its product, whose
 * description may run to kilobytes, and reading it made the permit cost more the
 * longer the sheet's descriptions (bench/script-cost.ts, SCRIPT_COST_DESCRIPTION=5000:
 * 40.0 µs a row against 23.5 through the name).
 */
export const jobNameFor = (sellerId: string, home: string) => (home === sellerId ? `register:${sellerId}` : `register:${sellerId}:${home}`);

/**
 * The queue prefixes new uploads are spread over: QUEUE_SHARDS of them, or by
 * default 1 on a single Redis and 2 per master on a cluster (docs/operations.md, "Queue
 * shards"). `redis` must be connected (a cluster's masters are counted).
 */
export function resolveShardPrefixes(config: Config, redis: object): string[] {
  const cluster = config.redisClusterNodes.length > 0;
  const nodes = (redis as { nodes?: (role: 'master') => unknown[] }).nodes;
  const masters = cluster && typeof nodes === 'function' ? nodes.call(redis, 'master').length : 1;
  const shards = config.queueShards ?? (cluster ? Math.max(2, 2 * masters) : 1);
  return shardPrefixes(config.queuePrefix, shards);
}
