/**
 * Each running pool says in Redis how many of its worker processes are up, so
 * that the console (on another host, perhaps) can show the pool. One hash per
 * namespace, one field per pool (`host:pid`), rewritten every few seconds; a
 * field not rewritten for STALE_MS belongs to a pool that is gone.
 */
import { hostname } from 'node:os';
import type { RedisClient } from '../redis.js';

export const PRESENCE_EVERY_MS = 2000;
export const STALE_MS = 15_000;

export const poolsKey = (ns: string) => `${ns}:pools`;

export interface PoolPresence {
  /** host:pid of the supervisor */
  id: string;
  up: number;
  expected: number;
  /** the supervisor's clock when written (ms) */
  at: number;
}

/**
 * Writes this pool's presence now and every PRESENCE_EVERY_MS.
 * @returns stop: removes the field (best effort) and stops writing
 */
export function announcePool(redis: RedisClient, ns: string, counts: () => { up: number; expected: number }, now: () => number = Date.now): () => Promise<void> {
  const id = `${hostname()}:${process.pid}`;
  const write = () => {
    const p: PoolPresence = { id, ...counts(), at: now() };
    redis.multi().hset(poolsKey(ns), id, JSON.stringify(p)).pexpire(poolsKey(ns), STALE_MS * 4).exec().catch(() => undefined);
  };
  write();
  const timer = setInterval(write, PRESENCE_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    // never waits long: a stop must not hang on a Redis that is gone
    await Promise.race([redis.hdel(poolsKey(ns), id).catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
  };
}

/** The pools alive now: processes up and expected over all of them. */
export async function readPools(redis: RedisClient, ns: string, nowMs: number): Promise<{ up: number; expected: number; pools: number }> {
  const all = await redis.hgetall(poolsKey(ns));
  let up = 0;
  let expected = 0;
  let pools = 0;
  for (const text of Object.values(all)) {
    try {
      const p = JSON.parse(text) as PoolPresence;
      if (nowMs - p.at > STALE_MS) continue;
      up += p.up;
      expected += p.expected;
      pools++;
    } catch {
      // a field not written by this version: not a pool
    }
  }
  return { up, expected, pools };
}
