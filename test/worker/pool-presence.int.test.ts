/**
 * A pool's presence is stamped and judged by Redis's clock: a reader whose
 * host clock is far off (the console or `status` on another host) still sees
 * the pool that runs, and a pool that stopped writing is gone after STALE_MS
 * whatever the reader's clock says.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hostname } from 'node:os';
import { defineCommands } from '../../src/lua-commands.js';
import { announcePool, poolsKey, readPools, STALE_MS } from '../../src/worker/pool-presence.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  vi.restoreAllMocks();
  await redis?.stop();
});

const redisNow = async (c: ReturnType<TestRedis['client']>) => {
  const [s, us] = await c.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
};

describe('pool presence', () => {
  it('is read by Redis\'s clock, not the reader\'s', async () => {
    const c = defineCommands(redis.client());
    const stop = announcePool(c, 'clock', () => ({ up: 3, expected: 4 }));
    try {
      const field = async () => c.hget(poolsKey('clock'), `${hostname()}:${process.pid}`);
      for (let i = 0; i < 50 && !(await field()); i++) await new Promise((r) => setTimeout(r, 20));
      // stamped with Redis's time
      const at = (JSON.parse((await field())!) as { at: number }).at;
      expect(Math.abs(at - (await redisNow(c)))).toBeLessThan(1000);
      // a reader whose clock runs an hour ahead, then an hour behind
      for (const skew of [3_600_000, -3_600_000]) {
        const real = Date.now;
        const spy = vi.spyOn(Date, 'now').mockImplementation(() => real.call(Date) + skew);
        expect(await readPools(c, 'clock')).toEqual({ up: 3, expected: 4, pools: 1 });
        spy.mockRestore();
      }
    } finally {
      await stop();
    }
    expect(await readPools(c, 'clock')).toEqual({ up: 0, expected: 0, pools: 0 });
  });

  it('drops a pool not written for STALE_MS by Redis\'s clock, and a field it cannot read', async () => {
    const c = defineCommands(redis.client());
    const now = await redisNow(c);
    await c.hset(poolsKey('stale'), 'gone:1', JSON.stringify({ id: 'gone:1', up: 16, expected: 16, at: now - STALE_MS - 1000 }));
    await c.hset(poolsKey('stale'), 'live:2', JSON.stringify({ id: 'live:2', up: 2, expected: 16, at: now }));
    await c.hset(poolsKey('stale'), 'junk', 'not json');
    expect(await readPools(c, 'stale')).toEqual({ up: 2, expected: 16, pools: 1 });
  });
});
