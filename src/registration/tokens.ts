/**
 * Access tokens shared by the whole pool (marketplace.md, "Tokens and refusals").
 *
 * - `{ns}:tok:{sellerId}` hash { token, fp, life, renewed }: the seller's token, its
 *   credentials' fingerprint, its lifetime (ms), and 1 when it was fetched because
 *   a call was refused; the key expires with the token (PEXPIRE: Redis's clock).
 * - `{ns}:tok:{sellerId}:lock`: held (SET NX PX) by the one process fetching a
 *   token for the seller: at most one token request per seller in the pool.
 * - `{ns}:tok:{sellerId}:wait`: set for the time the token endpoint asked (its 429).
 *
 * A process keeps the token it read until REFRESH_SHARE of its life is left;
 * then one process fetches the next in the background while the others go on
 * with the current one, so calls do not meet expired tokens. Anyone who can read
 * Redis can read these tokens (docs/adapters.md, "Tokens").
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import type { CredentialStore } from './credentials.js';
import type { RegistrationClient } from './client.js';

/** A new token is fetched once less than this share of the current one's life is left. */
export const REFRESH_SHARE = 1 / 3;
/** A token with less than this left (ms) is not used: a call must reach the marketplace before it ends. */
const LAST_USE_MS = 1000;
/** How long a process that waits for another's token request looks again (ms). */
const POLL_MS = 50;
/** How long a row waits after a token request got no usable answer (ms). */
export const TOKEN_RETRY_MS = 2000;

export type TokenAnswer =
  | { token: string; renewed: boolean }
  /** The row waits this long (token endpoint throttled or unavailable): no attempt used. */
  | { waitMs: number; reason: string }
  /** The credentials were refused: the seller is paused with this reason. */
  | { rejected: string };

interface Held {
  token: string;
  fp: string;
  life: number;
  renewed: boolean;
  /** Host ms when it ends (read as PTTL, so Redis's clock decides). */
  endsAt: number;
}

export const tokenKey = (ns: string, sellerId: string) => `${ns}:tok:{${sellerId}}`;

export class SellerTokens {
  private readonly held = new Map<string, Held>();
  private readonly fetching = new Map<string, Promise<TokenAnswer>>();
  private readonly id = randomBytes(8).toString('hex');
  /** Token requests this process made (tests and metrics). */
  requests = 0;

  constructor(
    private readonly deps: {
      redis: RedisClient;
      ns: string;
      client: RegistrationClient;
      credentials: CredentialStore;
      log: Logger;
      timeoutMs: number;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private usable(h: Held | undefined, fp: string): h is Held {
    return h !== undefined && h.fp === fp && h.endsAt - this.now() > LAST_USE_MS;
  }

  private fresh(h: Held): boolean {
    return h.endsAt - this.now() > h.life * REFRESH_SHARE;
  }

  /** The seller's token for a call now. */
  async get(sellerId: string): Promise<TokenAnswer> {
    const fp = this.deps.credentials.fingerprint(sellerId);
    let h = this.held.get(sellerId);
    if (!this.usable(h, fp) || !this.fresh(h)) {
      h = await this.read(sellerId);
      if (h && h.fp !== fp) h = undefined;
    }
    if (this.usable(h, fp)) {
      // time for the next one: one process fetches it while calls go on with this one
      if (!this.fresh(h)) void this.fetch(sellerId, fp, undefined).catch(() => undefined);
      return { token: h.token, renewed: h.renewed };
    }
    return this.fetch(sellerId, fp, undefined);
  }

  /**
   * A call with `refused` was answered unauthorized: a token other than it, fetched
   * now unless another process already did.
   */
  async renew(sellerId: string, refused: string): Promise<TokenAnswer> {
    const fp = this.deps.credentials.fingerprint(sellerId);
    const h = this.held.get(sellerId);
    if (h && h.token === refused) this.held.delete(sellerId);
    return this.fetch(sellerId, fp, refused);
  }

  private async read(sellerId: string): Promise<Held | undefined> {
    const key = tokenKey(this.deps.ns, sellerId);
    const [[, h], [, pttl]] = (await this.deps.redis.multi().hgetall(key).pttl(key).exec()) as [[unknown, Record<string, string>], [unknown, number]];
    if (!h?.token || pttl <= 0) {
      this.held.delete(sellerId);
      return undefined;
    }
    const held: Held = { token: h.token, fp: h.fp ?? '', life: Number(h.life ?? pttl), renewed: h.renewed === '1', endsAt: this.now() + pttl };
    this.held.set(sellerId, held);
    return held;
  }

  /** One fetch per seller in this process; across processes, the lock. */
  private fetch(sellerId: string, fp: string, refused: string | undefined): Promise<TokenAnswer> {
    const running = this.fetching.get(sellerId);
    if (running) return running;
    const p = this.fetchShared(sellerId, fp, refused).finally(() => this.fetching.delete(sellerId));
    this.fetching.set(sellerId, p);
    return p;
  }

  private async fetchShared(sellerId: string, fp: string, refused: string | undefined): Promise<TokenAnswer> {
    const { redis, ns } = this.deps;
    const key = tokenKey(ns, sellerId);
    const deadline = this.now() + this.deps.timeoutMs * 3;
    for (;;) {
      const waitMs = await redis.pttl(`${key}:wait`);
      if (waitMs > 0) return { waitMs, reason: 'the token endpoint asked to wait' };
      const locked = await redis.set(`${key}:lock`, this.id, 'PX', this.deps.timeoutMs + 2000, 'NX');
      if (locked === 'OK') {
        try {
          // another process may have written one since
          const h = await this.read(sellerId);
          if (this.usable(h, fp) && h.token !== refused && (refused !== undefined || this.fresh(h))) return { token: h.token, renewed: h.renewed };
          return await this.request(sellerId, fp, refused !== undefined);
        } finally {
          if ((await redis.get(`${key}:lock`).catch(() => null)) === this.id) await redis.del(`${key}:lock`).catch(() => undefined);
        }
      }
      // another process is fetching it: go on with a usable token, else wait for theirs
      const h = await this.read(sellerId);
      if (this.usable(h, fp) && h.token !== refused) return { token: h.token, renewed: h.renewed };
      if (this.now() > deadline) return { waitMs: TOKEN_RETRY_MS, reason: 'another process is still fetching the token' };
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private async request(sellerId: string, fp: string, afterRefusal: boolean): Promise<TokenAnswer> {
    const { redis, ns, client, credentials, log } = this.deps;
    const key = tokenKey(ns, sellerId);
    this.requests++;
    const out = await client.requestToken({ sellerId, credentials: credentials.for(sellerId), now: this.now() });
    if ('token' in out) {
      const life = out.expiresInMs;
      await redis.multi()
        .del(key)
        .hset(key, { token: out.token, fp, life, renewed: afterRefusal ? 1 : 0 })
        .pexpire(key, life)
        .exec();
      this.held.set(sellerId, { token: out.token, fp, life, renewed: afterRefusal, endsAt: this.now() + life });
      log.debug({ sellerId, expiresInMs: life }, 'token fetched');
      return { token: out.token, renewed: afterRefusal };
    }
    switch (out.kind) {
      case 'unauthorized':
        return { rejected: out.reason };
      case 'throttled': {
        const waitMs = Math.max(1, out.retryAfterMs ?? 60_000);
        await redis.set(`${key}:wait`, '1', 'PX', waitMs);
        log.warn({ sellerId, retryAfterMs: waitMs }, 'the token endpoint answered throttled: token requests for the seller wait');
        return { waitMs, reason: 'the token endpoint asked to wait' };
      }
      default:
        log.warn({ sellerId, reason: out.reason }, 'token request got no usable answer; the rows wait and try again');
        return { waitMs: TOKEN_RETRY_MS, reason: out.reason };
    }
  }
}
