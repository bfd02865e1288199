/**
 * The comparison limiters of the bench, behind the processor's PermitLimiter
 * interface. Rows are still counted by complete-send.lua (without touching the
 * sliding window's sets) so that status and progress work the same.
 */
import type { RedisClient } from '../src/redis.js';
import { SellerLimiter, type CompleteArgs, type FinalOutcome, type LimiterSettings, type Permit, type PermitLimiter, type QueueKeys, type FinishedRow } from '../src/rate-limit/limiter.js';
import { CountingLimiter, granted, denied } from './peers/counting.js';

/**
 * The peers' libraries, loaded only by a pool that runs them (loadPeers): a pool of
 * the default limiter or bare BullMQ measures a worker's memory as the product's has it.
 */
type PeerClass = new (redis: RedisClient, settings: LimiterSettings) => PermitLimiter;
const peers: Partial<Record<'rate-limiter-flexible' | 'bottleneck', PeerClass>> = {};

/** Loads the peer libraries a pool of `kind` uses; before any makeLimiter of it. */
export async function loadPeers(kind: LimiterKind | 'by-seller'): Promise<void> {
  if (kind === 'rate-limiter-flexible' || kind === 'by-seller') peers['rate-limiter-flexible'] = (await import('./peers/rate-limiter-flexible.js')).RateLimiterFlexiblePeer;
  if (kind === 'bottleneck' || kind === 'by-seller') peers.bottleneck = (await import('./peers/bottleneck.js')).BottleneckPeer;
}

function peer(kind: 'rate-limiter-flexible' | 'bottleneck'): PeerClass {
  const loaded = peers[kind];
  if (!loaded) throw new Error(`${kind} is not loaded: call loadPeers first`);
  return loaded;
}

/**
 * The limiters a seller's rows can go through in the bench. `bullmq-limiter` is
 * BullMQ's own queue-wide `limiter` Worker option: a pool of its own with no
 * per-seller limiter ('none'); see bench-worker.ts.
 */
export type LimiterKind = 'sliding-window' | 'rate-limiter-flexible' | 'bottleneck' | 'token-bucket' | 'naive' | 'none';
/** A pool of this kind runs the default limiter, so it obeys pauses as the product's pool does; bare BullMQ and the peers do not. */
export const readsPauses = (kind: LimiterKind | 'by-seller') => kind === 'sliding-window' || kind === 'by-seller';

class TokenBucketLimiter extends CountingLimiter {
  async acquire(sellerId: string): Promise<Permit> {
    const [ok, wait] = await this.redis.tokenBucket(`${this.ns}:tb:{${sellerId}}`, this.settings.limit, this.settings.windowMs);
    return ok === 1 ? granted(this.settings) : denied(this.settings, wait);
  }
}

/** The limiter of the incident: GET, then INCR, from many processes. Not atomic. */
class NaiveLimiter extends CountingLimiter {
  async acquire(sellerId: string): Promise<Permit> {
    const key = `${this.ns}:naive:{${sellerId}}`;
    const count = Number((await this.redis.get(key)) ?? 0);
    if (count < this.settings.limit) {
      const n = await this.redis.incr(key);
      if (n === 1) await this.redis.pexpire(key, this.settings.windowMs);
      return granted(this.settings);
    }
    return denied(this.settings, await this.redis.pttl(key));
  }
}

/** Bare BullMQ: no limiter, no counting; the same HTTP call. */
class NoLimiter implements PermitLimiter {
  constructor(readonly settings: LimiterSettings) {}
  async acquire(): Promise<Permit> {
    return granted(this.settings);
  }
  async complete() {
    return { counted: false, total: 0, registered: 0, duplicate: 0, failed: 0 };
  }
  async block(_s: string, waitMs: number) {
    return waitMs;
  }
  async peek() {
    return { nextPermitInMs: 0, limit: this.settings.limit, windowMs: this.settings.windowMs, plannedAhead: 0 };
  }
}

/** One limiter per seller, chosen by the seller's name: `{kind}--...` (the bench's comparison pool). */
class BySellerLimiter implements PermitLimiter {
  private readonly byKind = new Map<string, PermitLimiter>();
  /** The default limiter, which asks permits ahead only for its own sellers. */
  private readonly slidingWindow: SellerLimiter;
  constructor(private readonly redis: RedisClient, readonly settings: LimiterSettings) {
    this.slidingWindow = new SellerLimiter(redis, settings, 'sliding-window--');
    this.byKind.set('sliding-window', this.slidingWindow);
  }
  /** The limiter of the last row this process counted: the run under way (runs do not overlap). */
  private current: PermitLimiter | undefined;
  private pick(sellerId: string): PermitLimiter {
    const kind = (sellerId.split('--')[0] ?? 'sliding-window') as LimiterKind;
    let l = this.byKind.get(kind);
    if (!l) this.byKind.set(kind, (l = makeLimiter(kind, this.redis, this.settings)));
    return l;
  }
  /**
   * Only after a row of the default's, or for a fetch of its own (no row finished)
   * while the default's run is under way: a bare or comparison run pays nothing for
   * it (but a process's first fetches of the run after one of the default's).
   */
  async permitNext(queue: QueueKeys, token: string, nonce: string, finished: FinishedRow | undefined, together?: number, expectedAt?: number) {
    const ours = (finished ? this.pick(finished.sellerId) : this.current) === this.slidingWindow;
    return ours ? this.slidingWindow.permitNext(queue, token, nonce, finished, together, expectedAt) : undefined;
  }
  acquire(sellerId: string, member: string, sendId: string, home?: string) { return this.pick(sellerId).acquire(sellerId, member, sendId, home); }
  complete(args: CompleteArgs, final: FinalOutcome | undefined, retentionS: number) {
    this.current = this.pick(args.sellerId);
    return this.current.complete(args, final, retentionS);
  }
  block(sellerId: string, waitMs: number, sendId: string, home?: string) { return this.pick(sellerId).block(sellerId, waitMs, sendId, home); }
  peek(sellerId: string) { return this.pick(sellerId).peek(sellerId); }
}

export function makeLimiter(kind: LimiterKind | 'by-seller', redis: RedisClient, settings: LimiterSettings): PermitLimiter {
  switch (kind) {
    case 'by-seller': return new BySellerLimiter(redis, settings);
    case 'sliding-window': return new SellerLimiter(redis, settings);
    case 'rate-limiter-flexible':
    case 'bottleneck': return new (peer(kind))(redis, settings);
    case 'token-bucket': return new TokenBucketLimiter(redis, settings);
    case 'naive': return new NaiveLimiter(redis, settings);
    case 'none': return new NoLimiter(settings);
  }
}
