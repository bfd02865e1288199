/**
 * rate-limiter-flexible's RateLimiterRedis, wired as its README shows: one
 * limiter with points = L per duration = W, consumed with one key per seller;
 * on a reject the job is delayed by the `msBeforeNext` it reports.
 */
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { LimiterSettings, Permit } from '../../src/rate-limit/limiter.js';
import type { RedisClient } from '../../src/redis.js';
import { CountingLimiter, denied, granted } from './counting.js';

export class RateLimiterFlexiblePeer extends CountingLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: RedisClient, settings: LimiterSettings) {
    super(redis, settings);
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${this.ns}:rlflx`,
      points: settings.limit,
      duration: settings.windowMs / 1000,
    });
  }

  async acquire(sellerId: string): Promise<Permit> {
    try {
      await this.limiter.consume(sellerId);
      return granted(this.settings);
    } catch (rejected) {
      if (rejected instanceof RateLimiterRes) return denied(this.settings, rejected.msBeforeNext);
      throw rejected;
    }
  }
}
