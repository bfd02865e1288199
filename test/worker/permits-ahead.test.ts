/**
 * A worker process's permits asked ahead (src/worker/permits-ahead.ts): each taken
 * once, by the job it was asked for; anything else makes the row ask for its own.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { Permit, PermitAhead, PermitLimiter, QueueKeys } from '../../src/rate-limit/limiter.js';
import { PermitsAhead } from '../../src/worker/permits-ahead.js';

const QUEUE: QueueKeys = { active: 'q:active', jobPrefix: 'q:' };
const granted: Permit = { granted: true, waitMs: 0, limit: 50, windowMs: 2000, event: undefined, redisNow: 1_000, slot: 1_000 };

/** A limiter whose permitNext answers from `answers` (in order), and whose acquire grants at once; the calls it saw. */
function fakeLimiter(answers: Array<PermitAhead | undefined | Error>) {
  const calls = { nonces: [] as string[], depths: [] as Array<[number | undefined, number | undefined]>, acquired: [] as Array<{ sellerId: string; member: string; sendId: string; home?: string }> };
  const limiter = {
    settings: {} as PermitLimiter['settings'],
    permitNext: async (_queue: QueueKeys, _token: string, nonce: string, _finished: unknown, together?: number, expectedAt?: number) => {
      calls.nonces.push(nonce);
      calls.depths.push([together, expectedAt]);
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer;
    },
    acquire: async (sellerId: string, member: string, sendId: string, home?: string) => {
      calls.acquired.push({ sellerId, member, sendId, home });
      return granted;
    },
  } as unknown as PermitLimiter;
  return { limiter, calls };
}

function logger() {
  const lines: Array<{ msg: string }> = [];
  const sink = new Writable({ write(chunk, _e, cb) { lines.push(JSON.parse(String(chunk))); cb(); } });
  return { log: createLogger({ level: 'debug' }, sink as never), lines };
}

describe('permits asked ahead', () => {
  it('are taken once, by the job they were asked for', async () => {
    const ahead: PermitAhead = { jobId: 'u1-2', sendId: 'u1:2#p0', permit: granted };
    const { limiter } = fakeLimiter([ahead]);
    const permits = new PermitsAhead(limiter, logger().log, 'p');
    permits.ask(QUEUE, 'token-1', { jobId: 'u1-1', sellerId: 'S1' }, 1, 0);
    expect(await permits.take('u1-2', 'token-1')).toBe(ahead);
    expect(await permits.take('u1-2', 'token-1')).toBeUndefined();
  });

  it('are not used by another job, which asks for its own, and the mismatch is logged', async () => {
    const { limiter, calls } = fakeLimiter([{ jobId: 'u1-2', sendId: 'u1:2#p0', permit: granted }]);
    const { log, lines } = logger();
    const permits = new PermitsAhead(limiter, log, 'p');
    permits.ask(QUEUE, 'token-1', undefined, 1, 0);
    const ahead = await permits.take('u1-3', 'token-1');
    expect(ahead).toBeUndefined();
    expect(lines.map((l) => l.msg)).toContain('a permit asked ahead was for another job; the row asks for its own');
    const own = await permits.permitFor(ahead, 'S1', 'u1:3', 'S1');
    expect(own.permit).toBe(granted);
    expect(calls.acquired).toEqual([{ sellerId: 'S1', member: 'u1:3', sendId: own.sendId, home: 'S1' }]);
    expect(own.sendId).toMatch(/^u1:3#p/);
  });

  it('that failed or found no job leave the row to ask for its own', async () => {
    const { limiter } = fakeLimiter([new Error('NOSCRIPT'), undefined]);
    const permits = new PermitsAhead(limiter, logger().log, 'p');
    permits.ask(QUEUE, 'token-1', undefined, 1, 0);
    permits.ask(QUEUE, 'token-2', undefined, 1, 0);
    expect(await permits.take('u1-1', 'token-1')).toBeUndefined();
    expect(await permits.take('u1-2', 'token-2')).toBeUndefined();
    // and none is kept for a token that was never asked with
    expect(await permits.take('u1-3', 'token-3')).toBeUndefined();
    expect(await permits.take('u1-3', undefined)).toBeUndefined();
  });

  it('give every send its own id (the process prefix, then a count), and say where each job lies', async () => {
    const { limiter, calls } = fakeLimiter([undefined, undefined]);
    const permits = new PermitsAhead(limiter, logger().log, 'ab12');
    permits.ask(QUEUE, 't1', undefined, 2, 0);
    permits.ask(QUEUE, 't2', undefined, 2, 1);
    const a = await permits.permitFor(undefined, 'S1', 'u1:1', 'S1');
    const b = await permits.permitFor(undefined, 'S1', 'u1:1', 'S1');
    const ids = [...calls.nonces, a.sendId.split('#')[1], b.sendId.split('#')[1]];
    expect(new Set(ids).size).toBe(4);
    // two asks in one write: the first one's job lies behind the second's (fetched after it)
    expect(calls.depths).toEqual([[2, 1], [2, 0]]);
    for (const id of ids) expect(id).toMatch(/^ab12[0-9a-z]+$/);
  });
});
