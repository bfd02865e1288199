/**
 * One of many OS processes hammering one seller's limiter (test/rate-limit/race.int.test.ts).
 * argv: port mode(naive|lua) seller limit windowMs guardMs rounds startAt(ms epoch) attemptsPerRound
 * Prints one JSON line: { grants: number[] } — Redis-clock times (ms) of the permits it got.
 */
import { Redis } from 'ioredis';
import { defineCommands } from '../src/lua-commands.js';
import { SellerLimiter } from '../src/rate-limit/limiter.js';

const [port, mode, seller, limit, windowMs, guardMs, rounds, startAt, attempts] = process.argv.slice(2);
const L = Number(limit);
const W = Number(windowMs);
const redis = defineCommands(new Redis({ port: Number(port), host: '127.0.0.1' }));
const limiter = new SellerLimiter(redis, { queuePrefix: '{race}', limit: L, windowMs: W, guardMs: Number(guardMs), holdMs: 0 });
// hold 0: each send's place is its send time (the race is about the decision, not the answer)

async function redisNow(): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** The limiter of the incident: GET, then INCR, not atomic. One fixed window per round. */
async function naive(round: number): Promise<number | undefined> {
  const key = `race:naive:{${seller}}:${round}`;
  const count = Number((await redis.get(key)) ?? 0);
  if (count >= L) return undefined;
  await redis.incr(key);
  await redis.pexpire(key, W * 10);
  return redisNow();
}

/** A row as a worker handles it: ask, wait the time Redis gives, ask again, until granted. */
async function lua(round: number, attempt: number): Promise<number | undefined> {
  const member = `${process.pid}:${round}:${attempt}`;
  for (let ask = 0; ; ask++) {
    const sendId = `${member}#${ask}`;
    const p = await limiter.acquire(seller!, member, sendId);
    if (p.waitMs > 0) await new Promise((r) => setTimeout(r, p.waitMs + 1));
    if (p.granted) return p.redisNow + p.waitMs;
  }
}

const grants: number[] = [];
for (let round = 0; round < Number(rounds); round++) {
  const at = Number(startAt) + round * W;
  await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
  for (let a = 0; a < Number(attempts); a++) {
    const t = mode === 'naive' ? await naive(round) : await lua(round, a);
    if (t !== undefined) grants.push(t);
  }
}
process.stdout.write(`${JSON.stringify({ grants })}\n`);
redis.disconnect();
