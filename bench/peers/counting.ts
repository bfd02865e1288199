/**
 * The base of the bench's comparison limiters: rows are still counted by
 * complete-send.lua (without touching the sliding window's sets), so that status
 * and progress work the same whichever limiter decides the sends.
 */
import { SellerLimiter, type CompleteArgs, type FinalOutcome, type LimiterSettings, type Permit, type PermitLimiter } from '../../src/rate-limit/limiter.js';
import { namespaceOf } from '../../src/keys.js';
import type { RedisClient } from '../../src/redis.js';

export const granted = (s: LimiterSettings, redisNow = 0): Permit => ({ granted: true, waitMs: 0, limit: s.limit, windowMs: s.windowMs, event: undefined, redisNow, slot: redisNow });
export const denied = (s: LimiterSettings, waitMs: number): Permit => ({ granted: false, waitMs: Math.max(1, waitMs), limit: s.limit, windowMs: s.windowMs, event: undefined, redisNow: 0, slot: 0 });

export abstract class CountingLimiter implements PermitLimiter {
  protected readonly counter: SellerLimiter;
  protected readonly ns: string;
  constructor(protected readonly redis: RedisClient, readonly settings: LimiterSettings) {
    this.counter = new SellerLimiter(redis, settings);
    this.ns = namespaceOf(settings.queuePrefix);
  }
  abstract acquire(sellerId: string, member: string, sendId: string): Promise<Permit>;
  complete(args: CompleteArgs, final: FinalOutcome | undefined, retentionS: number) {
    return this.counter.complete({ ...args, sendId: '' }, final, retentionS);
  }
  async peek() {
    return { nextPermitInMs: 0, limit: this.settings.limit, windowMs: this.settings.windowMs, plannedAhead: 0 };
  }
  /** These designs know nothing of Retry-After: only the refused row waits. */
  async block(_sellerId: string, waitMs: number): Promise<number> {
    return waitMs;
  }
}

