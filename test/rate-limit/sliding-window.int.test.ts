import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { commandCalls, limiterOn, minGap, redisTime } from '../helpers/limiter.js';
import { sellerKeys, uploadKeys } from '../../src/keys.js';
import type { Permit } from '../../src/rate-limit/limiter.js';

let server: TestRedis;
beforeAll(async () => { server = await startRedis(); });
afterAll(async () => { await server?.stop(); });

describe('sliding-window.lua against a real Redis', () => {
  it('grants L at once, then gives each later row a slot W + G after the L-th before it', async () => {
    const { limiter } = limiterOn(server, { limit: 3, windowMs: 1000, guardMs: 100 });
    const replies = [];
    for (let row = 1; row <= 7; row++) replies.push(await limiter.acquire('S1', `u:${row}`, `u:${row}#a`));
    expect(replies.map((r) => r.granted)).toEqual([true, true, true, false, false, false, false]);
    const t0 = replies[0]!.redisNow;
    const slots = replies.slice(3).map((r) => r.redisNow + r.waitMs - t0);
    // rows 4-6 wait about one span, row 7 about two spans
    for (const s of slots.slice(0, 3)) expect(s).toBeGreaterThanOrEqual(1100);
    for (const s of slots.slice(0, 3)) expect(s).toBeLessThan(1100 + 50);
    expect(slots[3]).toBeGreaterThanOrEqual(2200);
    // the first row planned behind the full window says so; the rows after it say nothing more
    expect(replies.map((r) => r.event)).toEqual([undefined, undefined, undefined, 'throttled', undefined, undefined, undefined]);
  });

  it("makes a seller whose rows the producer defers throttled when its window fills, and released when its next window opens", async () => {
    const { limiter, redis } = limiterOn(server, { limit: 3, windowMs: 600, guardMs: 100 });
    const k = limiter.keys('DF');
    // the producer held rows back for 2 windows (upload/deferral.ts)
    const until = await redis.deferRows(k.defer, k.deferred, 1400, 700);
    const first = [];
    for (let row = 1; row <= 3; row++) first.push(await limiter.acquire('DF', `d:${row}`, `d:${row}#a`));
    expect(first.map((r) => r.granted)).toEqual([true, true, true]);
    // the grant that fills the window says so, with when the next send may go
    expect(first.map((r) => r.event)).toEqual([undefined, undefined, 'throttled']);
    expect(first[2]!.nextPermitInMs).toBeGreaterThan(600);
    expect(first[2]!.nextPermitInMs).toBeLessThanOrEqual(700);
    for (let row = 1; row <= 3; row++) await limiter.complete({ sellerId: 'DF', uploadId: 'd', row, member: `d:${row}`, sendId: `d:${row}#a` }, undefined, 60);
    // the second window's rows wake early: planned, with no event (the full window said it)
    const woken: Permit[] = [];
    for (let row = 4; row <= 6; row++) woken.push(await limiter.acquire('DF', `d:${row}`, `d:${row}#a`));
    expect(woken.map((r) => r.granted)).toEqual([false, false, false]);
    expect(woken.map((r) => r.event)).toEqual([undefined, undefined, undefined]);
    await new Promise((r) => setTimeout(r, Math.max(...woken.map((w) => w.waitMs)) + 5));
    // the window opens: its first grant releases the seller, the one that fills it throttles it again
    const second = [];
    for (let row = 4; row <= 6; row++) second.push(await limiter.acquire('DF', `d:${row}`, `d:${row}#b`));
    expect(second.every((r) => r.granted)).toBe(true);
    expect(second.map((r) => r.event)).toEqual(['released', undefined, 'throttled']);
    for (let row = 4; row <= 6; row++) await limiter.complete({ sellerId: 'DF', uploadId: 'd', row, member: `d:${row}`, sendId: `d:${row}#b` }, undefined, 60);
    // the last window, once the deferral is over: its first grant releases the seller, and its
    // full window does not throttle it (no row waits behind it)
    const untilDeferred = until - (await redisTime(redis));
    await new Promise((r) => setTimeout(r, Math.max(0, untilDeferred)));
    const last: Permit[] = [];
    for (let row = 7; row <= 9; row++) last.push(await limiter.acquire('DF', `d:${row}`, `d:${row}#a`));
    // (in grant order: those granted at once, then the rest once their slots come)
    const lastGrants = last.filter((r) => r.granted);
    await new Promise((r) => setTimeout(r, Math.max(0, ...last.map((w) => (w.granted ? 0 : w.waitMs))) + 5));
    for (const [i, reply] of last.entries()) {
      if (!reply.granted) lastGrants.push(await limiter.acquire('DF', `d:${7 + i}`, `d:${7 + i}#b`));
    }
    expect(lastGrants.every((r) => r.granted)).toBe(true);
    expect(lastGrants.map((r) => r.event)).toEqual(['released', undefined, undefined]);
  });

  it('re-delays a row that wakes before its slot by the time that remains, and grants it at its slot', async () => {
    const { limiter } = limiterOn(server, { limit: 2, windowMs: 400, guardMs: 50 });
    await limiter.acquire('S2', 'u:1', 's1');
    await limiter.acquire('S2', 'u:2', 's2');
    for (const [row, sendId] of [[1, 's1'], [2, 's2']] as const) {
      await limiter.complete({ sellerId: 'S2', uploadId: 'u', row, member: `u:${row}`, sendId }, undefined, 60);
    }
    const first = await limiter.acquire('S2', 'u:3', 's3');
    expect(first.granted).toBe(false);
    const early = await limiter.acquire('S2', 'u:3', 's3b');
    expect(early.granted).toBe(false);
    expect(early.waitMs).toBeLessThanOrEqual(first.waitMs);
    expect(early.waitMs).toBeGreaterThan(first.waitMs - 100);
    await new Promise((r) => setTimeout(r, early.waitMs + 5));
    const onTime = await limiter.acquire('S2', 'u:3', 's3c');
    expect(onTime.granted).toBe(true);
    expect(onTime.event).toBe('released');
  });

  it('grants a woken row whose place frees a little after its slot for that moment, instead of delaying it a third time', async () => {
    // span 1100 ms: sends that free within 150 ms are granted with an in-process wait
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 1000, guardMs: 100 });
    await limiter.acquire('S7', 'u:1', 's1');
    await limiter.acquire('S7', 'u:2', 's2');
    const planned = await limiter.acquire('S7', 'u:3', 's3');
    expect(planned.granted).toBe(false);
    // the window's two sends are answered late: the L-th newest place frees 130 ms after the slot
    await new Promise((r) => setTimeout(r, 130));
    const answers = [];
    for (const [row, sendId] of [[1, 's1'], [2, 's2']] as const) {
      answers.push(await limiter.complete({ sellerId: 'S7', uploadId: 'u', row, member: `u:${row}`, sendId }, undefined, 60));
    }
    const untilSlot = planned.slot - (await redisTime(redis));
    await new Promise((r) => setTimeout(r, Math.max(0, untilSlot)));
    const woken = await limiter.acquire('S7', 'u:3', 's3b');
    expect(woken.granted).toBe(true);
    expect(woken.waitMs).toBeLessThanOrEqual(150);
    // still W + G after the L-th newest answer
    expect(woken.redisNow + woken.waitMs).toBeGreaterThanOrEqual(Math.min(...answers.map((a) => a.redisNow)) + 1100);
  });

  it("frees the slots of rows cancelled before they were sent: the seller's next upload is planned behind the rows still to go", async () => {
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 1000, guardMs: 100, queuePrefix: '{cancelled}' });
    await redis.hset(uploadKeys('cancelled', 'S9', 'a').upload, { total: 10, uploadId: 'a' });
    const first = [];
    for (let row = 1; row <= 10; row++) first.push(await limiter.acquire('S9', `a:${row}`, `a:${row}#1`));
    // rows 3-10 hold slots one to four spans out
    expect(first.map((r) => r.granted)).toEqual([true, true, false, false, false, false, false, false, false, false]);
    expect(first[9]!.waitMs).toBeGreaterThan(4 * 1100 - 100);
    // the upload is cancelled: rows 5-10 were never sent (rows 3 and 4 stay, as a worker holds them)
    for (let row = 5; row <= 10; row++) {
      const c = await limiter.complete({ sellerId: 'S9', uploadId: 'a', row, member: `a:${row}`, sendId: '' }, { outcome: 'cancelled', detail: {} }, 60);
      expect(c.counted).toBe(true);
    }
    // a row of the next upload goes right after rows 3 and 4's window, not four spans out
    const next = await limiter.acquire('S9', 'b:1', 'b:1#1');
    expect(next.granted).toBe(false);
    expect(next.waitMs).toBeGreaterThan(2 * 1100 - 100);
    expect(next.waitMs).toBeLessThan(3 * 1100);
    expect((await limiter.peek('S9')).plannedAhead).toBe(3);
  });

  it("peeks a seller's next permit, rows planned ahead and recent sends in each state: fresh, full and in flight, answered, planned, blocked", async () => {
    // L = 3, W + G = 1100 ms, hold 2000 ms
    const { limiter, redis } = limiterOn(server, { limit: 3, windowMs: 1000, guardMs: 100, holdMs: 2000 });
    // the peek reads Redis's clock itself: `before` and `after` bracket it, so a bound on the peek's own `now` holds however many ms go by
    const peek = async () => {
      const before = await redisTime(redis);
      const p = await limiter.peek('PK');
      const after = await redisTime(redis);
      return { ...p, before, after, nextAt: [before + p.nextPermitInMs, after + p.nextPermitInMs] as const };
    };
    const fresh = await peek();
    expect([fresh.nextPermitInMs, fresh.plannedAhead, fresh.recentSends, fresh.recentSpanMs, fresh.inFlight]).toEqual([0, 0, 0, 0, 0]);

    const grants = [];
    for (let row = 1; row <= 3; row++) grants.push(await limiter.acquire('PK', `p:${row}`, `p:${row}#a`));
    expect(grants.every((g) => g.granted)).toBe(true);
    const sentAt = grants[0]!.redisNow;
    // in flight: each send holds its place until sentAt + hold, so the next may go a span after that
    const inFlight = await peek();
    expect(inFlight.inFlight).toBe(3);
    expect(inFlight.plannedAhead).toBe(0);
    expect(inFlight.recentSends).toBe(3);
    expect(inFlight.recentSpanMs).toBeLessThanOrEqual(inFlight.after - grants[2]!.redisNow);
    expect(inFlight.nextAt[1]).toBeGreaterThanOrEqual(sentAt + 2000 + 1100);
    expect(inFlight.nextAt[0]).toBeLessThanOrEqual(grants[2]!.redisNow + 2000 + 1100);

    await new Promise((r) => setTimeout(r, 30));
    const answeringFrom = await redisTime(redis);
    for (let row = 1; row <= 3; row++) await limiter.complete({ sellerId: 'PK', uploadId: 'p', row, member: `p:${row}`, sendId: `p:${row}#a` }, undefined, 60);
    const answeredBy = await redisTime(redis);
    // answered: the places are the answer times, so the oldest went between answeringFrom and answeredBy,
    // and the window frees a span after it
    const answered = await peek();
    expect(answered.inFlight).toBe(0);
    expect(answered.recentSends).toBe(3);
    expect(answered.recentSpanMs).toBeGreaterThanOrEqual(answered.before - answeredBy);
    expect(answered.recentSpanMs).toBeLessThanOrEqual(answered.after - answeringFrom);
    expect(answered.nextAt[1]).toBeGreaterThanOrEqual(answeringFrom + 1100);
    expect(answered.nextAt[0]).toBeLessThanOrEqual(answeredBy + 1100);

    // a fourth row is planned for when the window frees: it is the next permit, and planned ahead
    const fourth = await limiter.acquire('PK', 'p:4', 'p:4#a');
    expect(fourth.granted).toBe(false);
    const planned = await peek();
    expect(planned.plannedAhead).toBe(1);
    const slot = fourth.redisNow + fourth.waitMs;
    expect(planned.nextAt[0]).toBeLessThanOrEqual(slot);
    expect(planned.nextAt[1]).toBeGreaterThanOrEqual(slot);

    // a 429's block beyond that slot moves the next permit to the block's end
    const before = await redisTime(redis);
    const waitMs = await limiter.block('PK', 5000, 'p:3#a');
    const after = await redisTime(redis);
    const blocked = await peek();
    expect(blocked.plannedAhead).toBe(1);
    expect(blocked.nextAt[1]).toBeGreaterThanOrEqual(before + waitMs);
    expect(blocked.nextAt[0]).toBeLessThanOrEqual(after + waitMs);
  });

  it("counts among a seller's recent sends no grant for a moment still ahead: at its rule it reads L, never the window before's sends and the next one's", async () => {
    // L = 3, W + G = 1100 ms. The window's 3 sends are answered; a row asking 120 ms before
    // the oldest of them leaves the span is granted for that moment and waits for it in-process
    // (within the 150 ms reserve). A peek before that moment sees the 3 sends; the grant has
    // not gone. Timed on a busy host the peek can come after the moment: then the case is run again.
    const { limiter, redis } = limiterOn(server, { limit: 3, windowMs: 1000, guardMs: 100, holdMs: 2000, queuePrefix: '{recent}' });
    let seen = 0;
    for (let attempt = 0; attempt < 5 && seen === 0; attempt++) {
      const seller = `RS${attempt}`;
      for (let row = 1; row <= 3; row++) expect((await limiter.acquire(seller, `r:${row}`, `r:${row}#a`)).granted).toBe(true);
      for (let row = 1; row <= 3; row++) await limiter.complete({ sellerId: seller, uploadId: 'r', row, member: `r:${row}`, sendId: `r:${row}#a` }, undefined, 60);
      const oldest = Number(await redis.zscore(sellerKeys('recent', seller).sent, 'r:1#a'));
      const wait = oldest + 1100 - 120 - (await redisTime(redis));
      await new Promise((r) => setTimeout(r, Math.max(0, wait)));
      const next = await limiter.acquire(seller, 'r:4', 'r:4#a');
      const p = await limiter.peek(seller);
      const after = await redisTime(redis);
      // granted for a moment ahead, and peeked before it
      if (!next.granted || next.waitMs <= 0 || after >= next.redisNow + next.waitMs) continue;
      seen++;
      expect(p.recentSends).toBe(3);
      // the grant is the seller's next send (in flight from its moment), and the window is full until the oldest answer leaves the span
      expect(p.inFlight).toBe(1);
      expect(p.nextPermitInMs).toBeGreaterThan(0);
    }
    expect(seen).toBe(1);
  });

  it('reports the next permit with a count that crosses a 10 % step of an unfinished upload, and only then', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 1000, guardMs: 100, queuePrefix: '{next}' });
    await redis.hset(uploadKeys('next', 'S5', 'u').upload, { total: 20, uploadId: 'u' });
    const grants = [];
    for (let row = 1; row <= 4; row++) grants.push(await limiter.acquire('S5', `u:${row}`, `u:${row}#a`));
    expect(grants.map((g) => g.granted)).toEqual([true, true, false, false]);
    const done = async (row: number) =>
      limiter.complete({ sellerId: 'S5', uploadId: 'u', row, member: `u:${row}`, sendId: `u:${row}#a` }, { outcome: 'registered', detail: {} }, 60);
    const first = await done(1); // 1 of 20: no step crossed
    expect(first.nextPermitInMs).toBeUndefined();
    const second = await done(2); // 2 of 20: the 10 % step; rows 3 and 4 hold the next slot
    expect(second.nextPermitInMs).toBeGreaterThan(1000);
    expect(second.nextPermitInMs).toBeLessThanOrEqual(grants[2]!.waitMs);
    const again = await done(2); // counted once: nothing reported the second time
    expect(again.counted).toBe(false);
    expect(again.nextPermitInMs).toBeUndefined();
    await limiter.complete({ sellerId: 'S5', uploadId: 'u', row: 3, member: 'u:3', sendId: '' }, { outcome: 'registered', detail: {} }, 60);
    const unwanted = await limiter.complete( // 4 of 20: a step, but no one will log it
      { sellerId: 'S5', uploadId: 'u', row: 4, member: 'u:4', sendId: '' }, { outcome: 'registered', detail: {}, wantNextPermit: false }, 60);
    expect(unwanted.counted).toBe(true);
    expect(unwanted.nextPermitInMs).toBeUndefined();
  });

  it('keeps every key under the seller hash tag, each with a TTL', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 500, guardMs: 50, queuePrefix: '{tags}' });
    await redis.hset(uploadKeys('tags', 'S-3', 'up1').upload, { total: 3, uploadId: 'up1' });
    for (let row = 1; row <= 3; row++) await limiter.acquire('S-3', `up1:${row}`, `up1:${row}#x`);
    await limiter.complete({ sellerId: 'S-3', uploadId: 'up1', row: 1, member: 'up1:1', sendId: 'up1:1#x' }, { outcome: 'registered', detail: { productId: 'P1' } }, 60);
    await limiter.block('S-3', 300, 'up1:2#x');
    const keys = await redis.keys('tags:*');
    expect(keys.length).toBeGreaterThanOrEqual(5);
    for (const key of keys) {
      expect(key).toContain('{S-3}');
      expect(await redis.pttl(key)).toBeGreaterThan(0);
    }
  });

  it("checks `sent`'s TTL at an answer only when it came 0.9 s or more after its send, and both still outlive their entries by a span", async () => {
    const windowMs = 400, span = windowMs;
    const { limiter, redis } = limiterOn(server, { limit: 10, windowMs, guardMs: 0, holdMs: 100, queuePrefix: '{ttl3}' });
    const k = limiter.keys('T7');
    const pttls = () => commandCalls(redis, 'pttl');
    const answerAfter = async (row: number, ms: number) => {
      const asked = Date.now();
      expect((await limiter.acquire('T7', `u:${row}`, `u:${row}#x`)).granted).toBe(true);
      await new Promise((r) => setTimeout(r, ms));
      const before = await pttls();
      await limiter.complete({ sellerId: 'T7', uploadId: 'u', row, member: `u:${row}`, sendId: `u:${row}#x` }, undefined, 60);
      return { reads: (await pttls()) - before, tookMs: Date.now() - asked };
    };
    // 0.65 s: the grant's TTLs (the entry's place + W + G + 1 s) still cover it, nothing is read
    // (unless this host stalled the answer past 0.9 s)
    const soon = await answerAfter(1, 650);
    if (soon.tookMs < 880) expect(soon.reads).toBe(0);
    // 1.2 s (a stalled worker): `sent`'s is read, and raised to outlive the moved entry by a
    // span; `plan`'s entries stay at their slots, which the grant's TTL covers
    expect((await answerAfter(2, 1200)).reads).toBe(1);
    expect(await redis.pttl(k.sent)).toBeGreaterThanOrEqual(span);
    expect(await redis.pttl(k.plan)).toBeGreaterThanOrEqual(span);
  });

  it('gives `plan` its TTL when a grant or a wait creates it anew while `sent` still has one', async () => {
    const windowMs = 200, span = windowMs;
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs, guardMs: 0, holdMs: 100, queuePrefix: '{ttl2}' });
    const k = limiter.keys('T8');
    for (const row of [1, 2]) expect((await limiter.acquire('T8', `u:${row}`, `u:${row}#x`)).granted).toBe(true);
    // a span later both entries are stale: the next grant trims `plan` away and writes it again
    await new Promise((r) => setTimeout(r, span + 150));
    expect((await limiter.acquire('T8', 'u:3', 'u:3#x')).granted).toBe(true);
    expect(await redis.zcard(k.plan)).toBe(1);
    expect(await redis.pttl(k.plan)).toBeGreaterThanOrEqual(span);
    // `plan` gone while `sent` lives on (it expired, or was never written): a wait creates it
    await redis.del(k.plan);
    await redis.pexpire(k.sent, 60_000);
    await limiter.block('T8', 5000, '');
    const waiting = await limiter.acquire('T8', 'u:4', 'u:4#x');
    expect(waiting.granted).toBe(false);
    expect(await redis.zscore(k.plan, 'u:4')).not.toBeNull();
    expect(await redis.pttl(k.plan)).toBeGreaterThan(5000);
  });

  it("gives `plan` and `sent` a TTL covering their entries after every grant, and writes it about once a span, not per grant", async () => {
    const windowMs = 300, guardMs = 0, holdMs = 400, span = windowMs + guardMs;
    const { limiter, redis } = limiterOn(server, { limit: 1000, windowMs, guardMs, holdMs, queuePrefix: '{ttl}' });
    const k = limiter.keys('T9');
    const calls = (cmd: string) => commandCalls(redis, cmd);
    const pexpires = () => calls('pexpire');
    const before = await pexpires();
    const pttlsBefore = await calls('pttl');
    let grants = 0;
    const until = Date.now() + 3 * span;
    while (Date.now() < until) {
      const p = await limiter.acquire('T9', `u:${grants}`, `u:${grants}#x`);
      expect(p.granted).toBe(true);
      grants++;
      // the newest entry of `sent` (in flight) is at now + hold, each must outlive the span after it
      expect(await redis.pttl(k.sent)).toBeGreaterThanOrEqual(holdMs + span);
      expect(await redis.pttl(k.plan)).toBeGreaterThanOrEqual(span);
      await new Promise((r) => setTimeout(r, 5));
    }
    const written = (await pexpires()) - before;
    // one TTL read per grant (`sent`'s: the two keys share it), none for the first (it created
    // `plan`, and wrote both), besides this test's two
    expect((await calls('pttl')) - pttlsBefore - 2 * grants).toBe(grants - 1);
    expect(grants).toBeGreaterThan(30);
    // two keys, each raised about once a span over three spans (a handful), against two per grant before
    expect(written).toBeLessThanOrEqual(12);
  });

  it('holds an unanswered send for its timeout, and moves an answered one to its completion time', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 1, windowMs: 200, guardMs: 0, holdMs: 5000 });
    const g = await limiter.acquire('S4', 'u:1', 'send-1');
    expect(g.granted).toBe(true);
    const k = limiter.keys('S4');
    expect(Number(await redis.zscore(k.sent, 'send-1'))).toBe(g.redisNow + 5000);
    const denied = await limiter.acquire('S4', 'u:2', 'send-2');
    expect(denied.granted).toBe(false);
    // Well past W + G, the unanswered send still holds its place: re-checks keep waiting.
    const until = Date.now() + 600;
    let recheck = await limiter.acquire('S4', 'u:2', 'send-2');
    while (Date.now() < until) {
      expect(recheck.granted).toBe(false);
      await new Promise((r) => setTimeout(r, recheck.waitMs));
      recheck = await limiter.acquire('S4', 'u:2', 'send-2');
    }
    expect(recheck.granted).toBe(false);
    await limiter.complete({ sellerId: 'S4', uploadId: 'u', row: 1, member: 'u:1', sendId: 'send-1' }, undefined, 60);
    const place = Number(await redis.zscore(k.sent, 'send-1'));
    expect(place).toBeGreaterThanOrEqual(g.redisNow + 600);
    expect(place).toBeLessThanOrEqual(await redisTime(redis));
    await new Promise((r) => setTimeout(r, 210));
    expect((await limiter.acquire('S4', 'u:2', 'send-2')).granted).toBe(true);
  });

  it("places an answered send at its answer's arrival, measured by the worker up to the call, never before its grant", async () => {
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 1000, guardMs: 0, holdMs: 5000 });
    const k = limiter.keys('S5');
    const g = await limiter.acquire('S5', 'u:1', 'send-1');
    await new Promise((r) => setTimeout(r, 150));
    // the answer reached the worker 100 ms before the completion
    const c = await limiter.complete({ sellerId: 'S5', uploadId: 'u', row: 1, member: 'u:1', sendId: 'send-1', answeredAt: performance.now() - 100 }, undefined, 60);
    const place = Number(await redis.zscore(k.sent, 'send-1'));
    expect(c.placedAt).toBe(place);
    expect(place).toBeLessThanOrEqual(c.redisNow - 100);
    // the call's own way to Redis only makes the place later than the answer
    expect(place).toBeGreaterThanOrEqual(c.redisNow - 110);
    // an answer "before" the grant (a worker's wrong measure) cannot move the place before the send
    const g2 = await limiter.acquire('S5', 'u:2', 'send-2');
    const c2 = await limiter.complete({ sellerId: 'S5', uploadId: 'u', row: 2, member: 'u:2', sendId: 'send-2', answeredAt: performance.now() - 60_000 }, undefined, 60);
    expect(Number(await redis.zscore(k.sent, 'send-2'))).toBe(g2.redisNow + g2.waitMs);
    expect(c2.placedAt).toBe(g2.redisNow + g2.waitMs);
    expect(g.granted).toBe(true);
  });

  it('takes a permit given back unused out of the window: the seller\'s next row goes at once, and a cancelled one frees its slot', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 5000, guardMs: 0, holdMs: 5000, queuePrefix: '{unsent}' });
    const k = limiter.keys('S10');
    const sent = await limiter.acquire('S10', 'u:1', 'send-1');
    const unused = await limiter.acquire('S10', 'u:2', 'send-2');
    expect([sent.granted, unused.granted]).toEqual([true, true]);
    expect(limiter.lastGrant?.sendId).toBe('send-2');
    // row 1's call went and was answered; row 2's seller was paused before its call left
    await limiter.complete({ sellerId: 'S10', uploadId: 'u', row: 1, member: 'u:1', sendId: 'send-1' }, undefined, 60);
    await limiter.complete({ sellerId: 'S10', uploadId: 'u', row: 2, member: 'u:2', sendId: 'send-2', unsent: true }, undefined, 60);
    expect(await redis.zscore(k.sent, 'send-2')).toBeNull();
    // this process vouches for the grant before it, which Redis still holds (lost-writes.ts)
    expect(limiter.lastGrant?.sendId).toBe('send-1');
    // and for none it gave back: two given back in a row leave it vouching for neither
    const a = await limiter.acquire('S12', 'v:1', 'a1');
    const b = await limiter.acquire('S12', 'v:2', 'b1');
    expect([a.granted, b.granted]).toEqual([true, true]);
    await limiter.complete({ sellerId: 'S12', uploadId: 'v', row: 2, member: 'v:2', sendId: 'b1', unsent: true }, undefined, 60);
    expect(limiter.lastGrant?.sendId).toBe('a1');
    await limiter.complete({ sellerId: 'S12', uploadId: 'v', row: 1, member: 'v:1', sendId: 'a1', unsent: true }, undefined, 60);
    expect(limiter.lastGrant).toBeUndefined();
    // one place of two is taken: the row resumed is granted now, not a window later
    const resumed = await limiter.acquire('S10', 'u:2', 'send-3');
    expect(resumed.granted).toBe(true);
    expect(resumed.waitMs).toBe(0);
    // now full: an answered send keeps its place, as before
    expect((await limiter.acquire('S10', 'u:3', 'send-4')).granted).toBe(false);
    // a row granted and then cancelled before its call left gives up its place and its slot
    await redis.hset(uploadKeys('unsent', 'S11', 'c').upload, { total: 2, uploadId: 'c' });
    const k11 = limiter.keys('S11');
    await limiter.acquire('S11', 'c:1', 'c1');
    await limiter.acquire('S11', 'c:2', 'c2');
    const c = await limiter.complete({ sellerId: 'S11', uploadId: 'c', row: 2, member: 'c:2', sendId: 'c2', unsent: true }, { outcome: 'cancelled', detail: {} }, 60);
    expect(c.counted).toBe(true);
    expect(await redis.zscore(k11.sent, 'c2')).toBeNull();
    expect(await redis.zscore(k11.plan, 'c:2')).toBeNull();
    expect((await limiter.acquire('S11', 'd:1', 'd1')).granted).toBe(true);
  });

  it('places a send that got no answer at the completion itself', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 1, windowMs: 1000, guardMs: 0, holdMs: 5000 });
    await limiter.acquire('S6', 'u:1', 'send-1');
    const c = await limiter.complete({ sellerId: 'S6', uploadId: 'u', row: 1, member: 'u:1', sendId: 'send-1' }, undefined, 60);
    expect(Number(await redis.zscore(limiter.keys('S6').sent, 'send-1'))).toBe(c.redisNow);
  });

  it('grants a row woken before its slot once the place it waits for is known to free sooner: the slot held a guessed answer time', async () => {
    // span 450 ms; reserve min(150, 450 / 4) = 112 ms
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 400, guardMs: 50 });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // the seller's answers have averaged 300 ms: rows planned behind future slots add that
    await redis.hset(limiter.keys('G1').lag, 'answer', 300);
    const r = [];
    for (let row = 1; row <= 5; row++) r.push(await limiter.acquire('G1', `u:${row}`, `s${row}`));
    expect(r.map((x) => x.granted)).toEqual([true, true, false, false, false]);
    for (const row of [1, 2]) await limiter.complete({ sellerId: 'G1', uploadId: 'u', row, member: `u:${row}`, sendId: `s${row}` }, undefined, 60);
    const slot3 = r[2]!.slot;
    // row 5 follows row 3, itself a future slot: planned one guessed answer (0.7 x 300 + 5 ms) later
    expect(r[4]!.slot - slot3).toBeGreaterThanOrEqual(450 + 215);
    await sleep(slot3 - (await redisTime(redis)) + 5);
    const sent3 = await limiter.acquire('G1', 'u:3', 's3b');
    expect(sent3.granted).toBe(true);
    await sleep(sent3.waitMs + 10);
    // row 3 is answered 10 ms after it went, not 300
    const answered = await limiter.complete({ sellerId: 'G1', uploadId: 'u', row: 3, member: 'u:3', sendId: 's3b' }, undefined, 60);
    // row 5 wakes 80 ms before its slot: its place freed at row 3's answer + W + G, long before
    await sleep(r[4]!.slot - (await redisTime(redis)) - 80);
    const woken = await limiter.acquire('G1', 'u:5', 's5b');
    expect(woken.granted).toBe(true);
    expect(woken.waitMs).toBe(0);
    expect(woken.redisNow).toBeLessThan(r[4]!.slot - 40);
    expect(woken.redisNow).toBeGreaterThanOrEqual(answered.redisNow + 450);
    redis.disconnect();
  });

  it("plans far windows with the worker's recent answer time, not the seller's average from its planning burst", async () => {
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 400, guardMs: 50, queuePrefix: '{hint}' });
    const span = 450;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const answer = (seller: string, row: number, sendId: string) =>
      limiter.complete({ sellerId: seller, uploadId: 'u', row, member: `u:${row}`, sendId }, undefined, 60);
    // Sends granted at a row's first ask teach nothing: they may be part of a burst.
    for (const row of [1, 2]) expect((await limiter.acquire('H1', `u:${row}`, `s${row}`)).granted).toBe(true);
    const planned = await limiter.acquire('H1', 'u:3', 's3');
    expect(planned.granted).toBe(false);
    for (const row of [1, 2]) await answer('H1', row, `s${row}`);
    expect(limiter.currentAnswerHint).toBeUndefined();
    // A row sent at its planned slot does: its answer time (Redis's clock) is the hint.
    await sleep(planned.waitMs + 5);
    const atSlot = await limiter.acquire('H1', 'u:3', 's3b');
    expect(atSlot.granted).toBe(true);
    await sleep(atSlot.waitMs + 30);
    await answer('H1', 3, 's3b');
    const hint = limiter.currentAnswerHint!;
    expect(hint.ms).toBeGreaterThanOrEqual(30);
    expect(hint.ms).toBeLessThan(120);

    // A seller whose own average ran long (300 ms) while its rows were planned.
    const plan = async (seller: string, asker = limiter) => {
      await redis.hset(asker.keys(seller).lag, 'answer', 300);
      const r = [];
      for (let row = 1; row <= 6; row++) r.push(await asker.acquire(seller, `u:${row}`, `${seller}-${row}`));
      expect(r.map((x) => x.granted)).toEqual([true, true, false, false, false, false]);
      // rows 5 and 6 follow rows 3 and 4, themselves future slots: 0.7 of an answer time (+ 5 ms) later
      return r[4]!.redisNow + r[4]!.waitMs - (r[2]!.redisNow + r[2]!.waitMs) - span;
    };
    const withHint = await plan('H2');
    expect(withHint).toBeGreaterThanOrEqual(Math.ceil(hint.ms * 0.7) + 5);
    expect(withHint).toBeLessThan(Math.ceil(hint.ms * 0.7) + 5 + 20);
    // A process with no hint uses the seller's average.
    const { limiter: fresh, redis: freshRedis } = limiterOn(server, { limit: 2, windowMs: 400, guardMs: 50, queuePrefix: '{hint}' });
    const withoutHint = await plan('H3', fresh);
    expect(withoutHint).toBeGreaterThanOrEqual(215);
    expect(withoutHint).toBeLessThan(215 + 20);
    freshRedis.disconnect();
    redis.disconnect();
  });

  it('forgets a hint older than 10 (W + G)', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 1, windowMs: 30, guardMs: 10, queuePrefix: '{stale}' });
    const span = 40;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    expect((await limiter.acquire('T1', 'u:1', 'a')).granted).toBe(true);
    await limiter.complete({ sellerId: 'T1', uploadId: 'u', row: 1, member: 'u:1', sendId: 'a' }, undefined, 60);
    const planned = await limiter.acquire('T1', 'u:2', 'b');
    await sleep(planned.waitMs + 2);
    let p = await limiter.acquire('T1', 'u:2', 'b2');
    while (!p.granted) { await sleep(p.waitMs + 1); p = await limiter.acquire('T1', 'u:2', 'b2'); }
    await sleep(p.waitMs);
    await limiter.complete({ sellerId: 'T1', uploadId: 'u', row: 2, member: 'u:2', sendId: 'b2' }, undefined, 60);
    const hint = limiter.currentAnswerHint!;
    expect(hint.ms).toBeLessThan(span);
    const margin = async (seller: string) => {
      await redis.hset(limiter.keys(seller).lag, 'answer', 100);
      const r = [];
      for (let row = 1; row <= 3; row++) r.push(await limiter.acquire(seller, `u:${row}`, `${seller}-${row}`));
      return r[2]!.redisNow + r[2]!.waitMs - (r[1]!.redisNow + r[1]!.waitMs) - span;
    };
    expect(await margin('T2')).toBe(Math.ceil(hint.ms * 0.7) + 5);
    await sleep(span * 10 + 50);
    expect(await margin('T3')).toBe(75);
    redis.disconnect();
  });

  it('makes every row of a seller wait after a 429, without touching other sellers', async () => {
    const { limiter } = limiterOn(server, { limit: 100, windowMs: 1000, guardMs: 0 });
    const g = await limiter.acquire('S5', 'u:1', 'a');
    await limiter.block('S5', 800, 'a');
    const other = await limiter.acquire('S5', 'u:2', 'b');
    expect(other.granted).toBe(false);
    expect(other.waitMs).toBeGreaterThan(700);
    expect((await limiter.acquire('S6', 'v:1', 'c')).granted).toBe(true);
    expect(g.granted).toBe(true);
  });

  it('picks up a per-seller override on its next call', async () => {
    const { limiter, redis } = limiterOn(server, { limit: 1, windowMs: 10_000, guardMs: 0 });
    await redis.set(limiter.keys('S7').rule, '3/10000');
    const r = [];
    for (let i = 1; i <= 4; i++) r.push(await limiter.acquire('S7', `u:${i}`, `s${i}`));
    expect(r.map((x) => x.granted)).toEqual([true, true, true, false]);
    expect(r[0]!.limit).toBe(3);
  });

  it("sends one row first for a seller whose marketplace announces its rule, after a span without answers, and the rest under the rule its answer brings", async () => {
    const { limiter, redis } = limiterOn(server, { limit: 5, windowMs: 600, guardMs: 50 });
    const k = limiter.keys('AR');
    // the marketplace announced 5 per 600 ms earlier (as announceRule writes it); the seller has sent nothing since
    await redis.mset(k.apiRule, '5/600', k.rule, '5/600');
    const burst: Permit[] = [];
    for (let row = 1; row <= 5; row++) burst.push(await limiter.acquire('AR', `a:${row}`, `a:${row}#1`));
    expect(burst.map((r) => r.granted)).toEqual([true, false, false, false, false]);
    // waiting for an answer is not the seller's rule: no throttled event, no throttle flag
    expect(burst.map((r) => r.event)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(await redis.exists(k.throttle)).toBe(0);
    for (const r of burst.slice(1)) expect(r.waitMs).toBeLessThanOrEqual(100);
    // asked again before the answer: still waiting
    await new Promise((r) => setTimeout(r, burst[1]!.waitMs + 5));
    expect((await limiter.acquire('AR', 'a:2', 'a:2#2')).granted).toBe(false);
    // the answer is late: a row asks again after as long as the first row has been out, not every 20 ms
    await new Promise((r) => setTimeout(r, 150));
    const late = await limiter.acquire('AR', 'a:3', 'a:3#2');
    expect(late.granted).toBe(false);
    expect(late.waitMs).toBeGreaterThanOrEqual(150);
    // the answer announces 2 per 600 ms: the worker writes it, then counts the row
    await redis.mset(k.apiRule, '2/600', k.rule, '2/600');
    await limiter.complete({ sellerId: 'AR', uploadId: 'a', row: 1, member: 'a:1', sendId: 'a:1#1' }, undefined, 60);
    const rest = [];
    for (let row = 2; row <= 5; row++) rest.push(await limiter.acquire('AR', `a:${row}`, `a:${row}#3`));
    expect(rest.map((r) => r.granted)).toEqual([true, false, false, false]);
    expect(rest[0]!.limit).toBe(2);
    await limiter.complete({ sellerId: 'AR', uploadId: 'a', row: 2, member: 'a:2', sendId: 'a:2#3' }, undefined, 60);
    // a span of silence again: the next upload's first row goes alone
    await new Promise((r) => setTimeout(r, 700));
    const again = [];
    for (let row = 1; row <= 2; row++) again.push(await limiter.acquire('AR', `b:${row}`, `b:${row}#1`));
    expect(again.map((r) => r.granted)).toEqual([true, false]);
    // a seller whose rule the marketplace has not announced sends its whole window at once
    const plain = [];
    for (let row = 1; row <= 5; row++) plain.push(await limiter.acquire('PL', `p:${row}`, `p:${row}#1`));
    expect(plain.every((r) => r.granted)).toBe(true);
    // ...unless the marketplace announces sellers' rules (or whether it does is not known yet):
    // then a seller new to the pool sends one row first too
    limiter.rulesAnnounced = () => true;
    const fresh = [];
    for (let row = 1; row <= 3; row++) fresh.push(await limiter.acquire('NW', `n:${row}`, `n:${row}#1`));
    expect(fresh.map((r) => r.granted)).toEqual([true, false, false]);
    expect(fresh[1]!.limit).toBe(5);
  });

  it("grants a first call at once only when nothing stands in its way: a slot handed out ahead, the turns of rows that gave their permits back, a throttled flag to clear", async () => {
    const { limiter, redis } = limiterOn(server, { limit: 2, windowMs: 300, guardMs: 0, holdMs: 2000 });
    // a row planned ahead (under a block since lifted): the new row goes after it, not before
    const ahead = limiter.keys('FA');
    const aheadSlot = (await redisTime(redis)) + 400;
    await redis.zadd(ahead.plan, aheadSlot, 'u:1');
    const behind = await limiter.acquire('FA', 'u:2', 'u:2#a');
    expect(behind.granted).toBe(false);
    expect(behind.redisNow + behind.waitMs).toBe(aheadSlot);
    // two rows planned 250 ms ago whose permits were given back (no place in `sent`): they keep
    // their turns, and the new row goes a span after the second of them, 50 ms from now
    const turns = limiter.keys('FT');
    const planned = (await redisTime(redis)) - 250;
    await redis.zadd(turns.plan, planned, 'u:1', planned, 'u:2');
    const next = await limiter.acquire('FT', 'u:3', 'u:3#a');
    expect(next.redisNow + next.waitMs).toBe(Math.max(next.redisNow, planned + 300));
    // flagged throttled, with room again: the grant releases the seller and clears the flag
    const flagged = limiter.keys('FR');
    await redis.set(flagged.throttle, '1', 'PX', 5000);
    const released = await limiter.acquire('FR', 'u:1', 'u:1#a');
    expect([released.granted, released.waitMs, released.event]).toEqual([true, 0, 'released']);
    expect(await redis.exists(flagged.throttle)).toBe(0);
  });

  it('keeps any L + 1 consecutive grants W + G apart on random arrival patterns', async () => {
    for (const [limit, windowMs, guardMs] of [[3, 300, 50], [5, 500, 20], [1, 150, 30]] as const) {
      const seller = `R${limit}`;
      const { limiter } = limiterOn(server, { limit, windowMs, guardMs });
      const grants: number[] = [];
      let calls = 0;
      const rows = 4 * limit + 3;
      const runRow = async (row: number) => {
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 600)));
        for (;;) {
          calls++;
          const sendId = `u:${row}#${calls}`;
          const p = await limiter.acquire(seller, `u:${row}`, sendId);
          if (p.granted) {
            // a permit may be for a moment from now: the send goes then
            await new Promise((r) => setTimeout(r, p.waitMs));
            grants.push(p.redisNow + p.waitMs);
            await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 20)));
            await limiter.complete({ sellerId: seller, uploadId: 'u', row, member: `u:${row}`, sendId }, undefined, 60);
            return;
          }
          await new Promise((r) => setTimeout(r, p.waitMs + Math.floor(Math.random() * 30)));
        }
      };
      await Promise.all(Array.from({ length: rows }, (_, i) => runRow(i + 1)));
      expect(grants).toHaveLength(rows);
      expect(minGap(grants, limit)).toBeGreaterThanOrEqual(windowMs + guardMs);
      // Rows planned while the send before them is still in flight may need a third call;
      // the pipeline's own figure (<= 2) is measured by `npm run bench`.
      expect(calls / rows).toBeLessThanOrEqual(3);
    }
  });
});
