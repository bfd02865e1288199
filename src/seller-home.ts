/**
 * A seller's home on Redis Cluster: the queue shard it is pinned to for its
 * life, chosen at its first upload (or its first `limits set`) and recorded in
 * `{ns}:home:{seller}`. Its limiter keys and its uploads' keys carry that
 * shard's hash tag (keys.ts), so they share one slot with its jobs: the permit
 * rides in the write that finishes the row before, and the row's count goes
 * ahead of its job's completion, as on a single Redis.
 *
 * - The pin never moves: a change of QUEUE_SHARDS moves no seller, whose window
 *   therefore stays one. A seller's new uploads go to its pinned shard, and the
 *   workers serve every queue an upload went to.
 * - The pin has no TTL: it lives as long as the seller is known, like the
 *   seller's rule override. It is written in the seller's own slot before the
 *   upload's WAIT on that master (upload/replicated.ts), so a lossy failover
 *   loses no pin an upload relied on. One lost anyway is chosen again the same
 *   way (the seller's id hashed over the shards).
 * - A seller with keys under its own tag from before pins existed (uploads still
 *   in the index, a rule, a window) is pinned to its own tag: its keys stay where
 *   they are and its uploads are spread by its id as before.
 * - On a single Redis every key is on one server: no pin, the seller's own tag.
 * - The pin is read or chosen in one call (lua/pin-home.lua); the upload index,
 *   for the seller's kept uploads, is read at most once a minute per process.
 */
import { Cluster } from 'ioredis';
import type { Config } from './config.js';
import type { RedisClient } from './redis.js';
import { namespaceOf, sellerKeys, uploadIndexKey, uploadKeys } from './keys.js';
import { shardOf } from './queue-shards.js';

export const homeKey = (ns: string, sellerId: string) => `${ns}:home:{${sellerId}}`;

/** The pin of a seller kept under its own tag (from before pins existed). */
const OWN_TAG = '';

/** The hash tag of a queue prefix (`bulk-register:{q#3}` -> `q#3`). */
export function tagOf(queuePrefix: string): string {
  const tag = /\{([^}]+)\}/.exec(queuePrefix)?.[1];
  if (tag === undefined) throw new Error(`queue prefix ${queuePrefix} has no hash tag`);
  return tag;
}

/** True where sellers are pinned: on Redis Cluster. */
export const pinsSellers = (redis: unknown): boolean => redis instanceof Cluster;

/** Pins already read, per connection: a pin never changes once written. */
const known = new WeakMap<object, Map<string, string>>();
const MAX_KNOWN = 10_000;

function remember(redis: object, ns: string, sellerId: string, home: string): string {
  let map = known.get(redis);
  if (!map) known.set(redis, (map = new Map()));
  if (map.size >= MAX_KNOWN) map.clear();
  map.set(`${ns}\n${sellerId}`, home);
  return home;
}

/** The hash tag a seller's keys carry (keys.ts `home`): its own id unless it is pinned to a shard. */
export async function homeOf(redis: Cluster | object, ns: string, sellerId: string): Promise<string> {
  if (!(redis instanceof Cluster)) return sellerId;
  const hit = known.get(redis)?.get(`${ns}\n${sellerId}`);
  if (hit !== undefined) return hit;
  const pin = await redis.get(homeKey(ns, sellerId));
  // not pinned yet: nothing of it lies anywhere but under its own tag
  if (pin === null) return sellerId;
  return remember(redis, ns, sellerId, pin === OWN_TAG ? sellerId : tagOf(pin));
}

/** The upload's keys under its seller's home (keys.ts `uploadKeys`), for a reader that has only the ids. */
export const uploadKeysOf = async (redis: object, ns: string, sellerId: string, uploadId: string) =>
  uploadKeys(ns, sellerId, uploadId, await homeOf(redis, ns, sellerId));

/** The seller's limiter keys under its home (keys.ts `sellerKeys`), for a reader that has only its id. */
export const sellerKeysOf = async (redis: object, ns: string, sellerId: string) => sellerKeys(ns, sellerId, await homeOf(redis, ns, sellerId));

export interface Home {
  /** The hash tag of the seller's keys. */
  home: string;
  /** The queue prefix of the seller's new uploads. */
  queue: string;
}

/**
 * The seller's home, pinned now if it has none: the shard its id hashes to among
 * `prefixes` (the shards new uploads are spread over). Off a cluster: its own tag,
 * and that shard.
 */
export async function pinHome(redis: RedisClient, config: Config, sellerId: string, prefixes: readonly string[]): Promise<Home> {
  const hashed = shardOf(sellerId, prefixes);
  if (!(redis instanceof Cluster)) return { home: sellerId, queue: hashed };
  const ns = namespaceOf(config.queuePrefix);
  // pinned before (every upload but a seller's first): one read, no look at the upload index
  const pin = (await redis.get(homeKey(ns, sellerId))) ?? (await pinOf(redis, ns, sellerId, hashed));
  if (pin === OWN_TAG) return { home: remember(redis, ns, sellerId, sellerId), queue: hashed };
  return { home: remember(redis, ns, sellerId, tagOf(pin)), queue: pin };
}

/** lua/pin-home.lua: the seller's pin, written now if it has none (one call in its slot). */
async function pinOf(redis: RedisClient, ns: string, sellerId: string, hashed: string): Promise<string> {
  const k = sellerKeys(ns, sellerId);
  // an upload of a pinned seller whose pin a failover lost is not one of these: its keys lie under the shard's tag
  const uploads = (await indexedUploads(redis, ns)).get(sellerId)?.map((uploadId) => uploadKeys(ns, sellerId, uploadId).upload) ?? [];
  const keys = [homeKey(ns, sellerId), k.plan, k.sent, k.rule, k.override, k.apiRule, k.blocked, ...uploads];
  return redis.pinHome(keys.length, ...keys, hashed);
}

/**
 * The upload index by seller, read at most once a minute per process: a seller
 * pins once, and an upload from before pins existed stays in the index for its
 * whole retention, so a snapshot a minute old still holds it (a producer that
 * pins many new sellers reads the index once, not once per seller).
 */
const indexes = new WeakMap<object, { ns: string; at: number; bySeller: Map<string, string[]> }>();
const INDEX_READ_EVERY_MS = 60_000;

async function indexedUploads(redis: RedisClient, ns: string): Promise<Map<string, string[]>> {
  const cached = indexes.get(redis);
  if (cached && cached.ns === ns && Date.now() - cached.at < INDEX_READ_EVERY_MS) return cached.bySeller;
  const bySeller = new Map<string, string[]>();
  for (const entry of await redis.zrange(uploadIndexKey(ns), '0', '-1')) {
    const slash = entry.indexOf('/');
    const seller = entry.slice(0, slash);
    bySeller.set(seller, [...(bySeller.get(seller) ?? []), entry.slice(slash + 1)]);
  }
  indexes.set(redis, { ns, at: Date.now(), bySeller });
  return bySeller;
}
