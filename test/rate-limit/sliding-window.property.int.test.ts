/**
 * fast-check: the Lua limiter against a brute-force model of the same rule, on
 * random arrival sequences, limits, windows and guards, replayed with the times
 * Redis reported. Also: slots are monotone, the spacing property holds, and
 * every key carries a TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { limiterOn, minGap } from '../helpers/limiter.js';
import { SlidingWindowModel } from './sliding-window-model.js';

let server: TestRedis;
beforeAll(async () => { server = await startRedis(); });
afterAll(async () => { await server?.stop(); });

type Op = { kind: 'ask' | 'complete'; row: number; pauseMs: number };

const opArb = fc.record({
  kind: fc.constantFrom<'ask' | 'complete'>('ask', 'ask', 'complete'),
  row: fc.integer({ min: 0, max: 11 }),
  pauseMs: fc.integer({ min: 0, max: 15 }),
});

describe('sliding-window.lua = the model', () => {
  it('agrees on every grant and wait, keeps slots monotone, spacing and TTLs', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 40, max: 200 }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(opArb, { minLength: 5, maxLength: 30 }),
        async (limit, windowMs, guardMs, ops: Op[]) => {
          run++;
          const seller = `P${run}`;
          const holdMs = 150;
          const { limiter, redis } = limiterOn(server, { limit, windowMs, guardMs, holdMs, queuePrefix: '{prop}' });
          const model = new SlidingWindowModel({ limit, windowMs, guardMs, holdMs });
          const lastSend = new Map<number, string>();
          const grants: number[] = [];
          const firstSlots: number[] = [];
          const asked = new Set<number>();
          try {
            let n = 0;
            for (const op of ops) {
              if (op.pauseMs) await new Promise((r) => setTimeout(r, op.pauseMs));
              const member = `u:${op.row}`;
              if (op.kind === 'ask') {
                const sendId = `${member}#${n++}`;
                const hint = limiter.currentAnswerHint;
                const real = await limiter.acquire(seller, member, sendId);
                const expected = model.acquire(member, sendId, real.redisNow, hint);
                expect({ granted: real.granted, waitMs: real.waitMs }).toEqual({ granted: expected.granted, waitMs: expected.waitMs });
                if (!asked.has(op.row)) {
                  asked.add(op.row);
                  // a row given a later slot: slots are handed out in order
                  if (!real.granted) firstSlots.push(real.redisNow + real.waitMs);
                }
                if (real.granted) {
                  grants.push(real.redisNow + real.waitMs);
                  lastSend.set(op.row, sendId);
                }
              } else {
                const sendId = lastSend.get(op.row);
                if (!sendId) continue;
                lastSend.delete(op.row);
                const done = await limiter.complete({ sellerId: seller, uploadId: 'u', row: op.row, member, sendId }, undefined, 60);
                model.complete(member, sendId, done.redisNow);
              }
            }
            for (let i = 1; i < firstSlots.length; i++) expect(firstSlots[i]).toBeGreaterThanOrEqual(firstSlots[i - 1]!);
            expect(minGap(grants, limit)).toBeGreaterThanOrEqual(windowMs + guardMs);
            for (const key of await redis.keys(`prop:rl:{${seller}}:*`)) expect(await redis.pttl(key)).toBeGreaterThan(0);
          } finally {
            redis.disconnect();
          }
        },
      ),
      { numRuns: 30 },
    );
  }, 180_000);

  it('agrees when an answer comes after its send\'s place went stale and before anything dropped it', async () => {
    // sent keeps entries older than the span until it holds L: an answer arriving
    // in between moves its send up to now, and that send counts again
    const limit = 3, windowMs = 400, guardMs = 0, holdMs = 150;
    const { limiter, redis } = limiterOn(server, { limit, windowMs, guardMs, holdMs, queuePrefix: '{prop-late}' });
    const model = new SlidingWindowModel({ limit, windowMs, guardMs, holdMs });
    const seller = 'LATE';
    const ask = async (row: number) => {
      const member = `u:${row}`;
      const real = await limiter.acquire(seller, member, `${member}#1`);
      const expected = model.acquire(member, `${member}#1`, real.redisNow, limiter.currentAnswerHint);
      expect({ row, granted: real.granted, waitMs: real.waitMs }).toEqual({ row, granted: expected.granted, waitMs: expected.waitMs });
      return real;
    };
    try {
      expect((await ask(0)).granted).toBe(true);
      expect((await ask(1)).granted).toBe(true);
      // both places (sent + hold) are now older than the span
      await new Promise((r) => setTimeout(r, holdMs + windowMs + 150));
      expect((await ask(2)).granted).toBe(true);
      const done = await limiter.complete({ sellerId: seller, uploadId: 'u', row: 1, member: 'u:1', sendId: 'u:1#1' }, undefined, 60);
      model.complete('u:1', 'u:1#1', done.redisNow);
      expect((await ask(3)).granted).toBe(true);
      // rows 1 (answered just now), 2 and 3 fill the window
      expect((await ask(4)).granted).toBe(false);
    } finally {
      redis.disconnect();
    }
  });
});
