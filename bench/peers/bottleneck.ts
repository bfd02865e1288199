/**
 * Bottleneck's Group keyed by seller with its ioredis datastore (Clustering), wired
 * as its README shows for "at most L per W": a reservoir of L refreshed to L every
 * W. A row is sent when its seller's limiter runs it, so a throttled row waits
 * inside its worker, holding the worker's slot (Bottleneck keeps its queue in
 * the process, not in Redis).
 */
import Bottleneck from 'bottleneck';
import type { LimiterSettings, Permit } from '../../src/rate-limit/limiter.js';
import type { RedisClient } from '../../src/redis.js';
import { CountingLimiter, granted } from './counting.js';

export class BottleneckPeer extends CountingLimiter {
  private readonly group: Bottleneck.Group;

  constructor(redis: RedisClient, settings: LimiterSettings) {
    super(redis, settings);
    const { host, port } = redis.options as { host: string; port: number };
    this.group = new Bottleneck.Group({
      id: `${this.ns}-bottleneck`,
      datastore: 'ioredis',
      clearDatastore: false,
      clientOptions: { host, port },
      reservoir: settings.limit,
      reservoirRefreshAmount: settings.limit,
      reservoirRefreshInterval: settings.windowMs,
    });
    this.group.on('error', () => undefined);
  }

  async acquire(sellerId: string): Promise<Permit> {
    await this.group.key(sellerId).schedule(async () => undefined);
    return granted(this.settings);
  }
}
