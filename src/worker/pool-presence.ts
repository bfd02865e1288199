/**
 * Each running pool says in Redis how many of its worker processes are up, so
 * that the console (on another host, perhaps) can show the pool. One hash per
 * namespace, one field per pool (`host:pid`), rewritten every few seconds; a
 * field not rewritten for STALE_MS belongs to a pool that is gone. Both the
 * write's time and the reader's judgement of it are Redis's clock (TIME in
 * lua/pool-presence.lua, on the key's node), so a reader on a host whose clock is off by more
 * than STALE_MS still sees the pool that runs.
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
  /** Redis's clock when written (ms) */
  at: number;
}

/**
 * Writes this pool's presence now and every PRESENCE_EVERY_MS.
 * @returns stop: removes the field (best effort) and stops writing
 */
export function announcePool(redis: RedisClient, ns: string, counts: () => { up: number; expected: number }): () => Promise<void> {
  const id = `${hostname()}:${process.pid}`;
  const write = () => {
    redis.poolPresence(poolsKey(ns), 'write', id, JSON.stringify({ id, ...counts() }), STALE_MS * 4).catch(() => undefined);
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

/** The pools alive now, by Redis's clock: processes up and expected over all of them. */
export async function readPools(redis: RedisClient, ns: string): Promise<{ up: number; expected: number; pools: number }> {
  const [nowMs, fields] = await redis.poolPresence(poolsKey(ns), 'read');
  let up = 0;
  let expected = 0;
  let pools = 0;
  for (let i = 1; i < fields.length; i += 2) {
    try {
      const p = JSON.parse(fields[i]!) as PoolPresence;
      if (!(nowMs - p.at <= STALE_MS)) continue;
      up += p.up;
      expected += p.expected;
      pools++;
    } catch {
      // a field not written by this version: not a pool
    }
  }
  return { up, expected, pools };
}
