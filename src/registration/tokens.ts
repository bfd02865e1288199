/**
 * Access tokens shared by the whole pool (marketplace.md, "Tokens and refusals").
 *
 * - `{ns}:tok:{sellerId}` hash { token, fp, life, renewed }: the seller's token, its
 *   credentials' fingerprint, its lifetime (ms), and 1 when it was fetched because
 *   a call was refused and no call has gone through with it yet (a refusal of such
 *   a token pauses the seller; one that has worked is renewed again when refused,
 *   as a marketplace that revokes tokens now and then asks); the key expires with
 *   the token (PEXPIRE: Redis's clock).
 * - `{ns}:tok:{sellerId}:lock`: held (SET NX PX) by the one process fetching a
 *   token for the seller: at most one token request per seller in the pool.
 * - `{ns}:tok:{sellerId}:wait`: set for the time the token endpoint asked (its 429),
 *   or TOKEN_RETRY_MS after a token request got no usable answer: the seller's rows
 *   wait instead of asking again at once.
 *
 * A process keeps the token it read until REFRESH_SHARE of its life is left;
 * then one process fetches the next in the background while the others go on
 * with the current one, so calls do not meet expired tokens. A row that needs a
 * token another row is fetching waits for it at most TOKEN_WAIT_MS, then is
 * delayed: a token endpoint that hangs holds one job's slot, not every slot
 * the seller's rows reach. Every token read goes to the redactor, so no process
 * writes one in a message, whichever process fetched it. Anyone who can read
 * Redis can read these tokens (docs/adapters.md, "Tokens").
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import { releaseLock, type RedisClient } from '../redis.js';
import type { CredentialStore } from './credentials.js';
import type { RegistrationClient } from './client.js';
import type { Redactor } from './redactor.js';

/** A new token is fetched once less than this share of the current one's life is left. */
export const REFRESH_SHARE = 1 / 3;
/** A token with less than this left (ms) is not used: a call must reach the marketplace before it ends. */
const LAST_USE_MS = 1000;
/** How long a process that waits for another's token request looks again (ms). */
const POLL_MS = 50;
/** How long a row waits after a token request got no usable answer (ms). */
export const TOKEN_RETRY_MS = 2000;
/** How long a row waits for a token another row is fetching before it gives its slot back (ms). */
export const TOKEN_WAIT_MS = 1000;

/** Marks a refused-then-renewed token as one a call has gone through with, if it is still the seller's. */
const PROVEN = `if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then redis.call('HSET', KEYS[1], 'renewed', 0) end return 0`;

export type TokenAnswer =
  | { token: string; renewed: boolean }
  /** The row waits this long (token endpoint throttled or unavailable): no attempt used. */
  | { waitMs: number; reason: string }
  /** The credentials were refused: the seller is paused with this reason; `fp`: the refused credentials' fingerprint. */
  | { rejected: string; fp: string };

interface Held {
  token: string;
  fp: string;
  life: number;
  renewed: boolean;
  /** Host ms when it ends (read as PTTL, so Redis's clock decides). */
  endsAt: number;
}

export const tokenKey = (ns: string, sellerId: string) => `${ns}:tok:{${sellerId}}`;

/** Waits for another row's token request at most TOKEN_WAIT_MS; then the row is delayed and its slot goes to other rows. */
function awhile(running: Promise<TokenAnswer>): Promise<TokenAnswer> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    running,
    new Promise<TokenAnswer>((resolve) => {
      timer = setTimeout(() => resolve({ waitMs: TOKEN_WAIT_MS, reason: 'another row is still fetching the token' }), TOKEN_WAIT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

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
      redactor: Redactor;
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
   * A call with `token` went through (the marketplace took it): a token fetched after a
   * refusal is then a good one, and a later refusal of it is renewed, not a pause.
   */
  proven(sellerId: string, token: string): void {
    const h = this.held.get(sellerId);
    if (!h || h.token !== token || !h.renewed) return;
    h.renewed = false;
    void this.deps.redis.eval(PROVEN, 1, tokenKey(this.deps.ns, sellerId), token).catch(() => undefined);
  }

  /** True when `token` is the seller's token fetched after a refusal, with no call through yet (read from Redis: another process may have proven it). */
  async unproven(sellerId: string, token: string): Promise<boolean> {
    const h = await this.read(sellerId);
    return h !== undefined && h.token === token && h.renewed;
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
    this.deps.redactor.addToken(held.token);
    this.held.set(sellerId, held);
    return held;
  }

  /** One fetch per seller in this process; across processes, the lock. */
  private fetch(sellerId: string, fp: string, refused: string | undefined): Promise<TokenAnswer> {
    const running = this.fetching.get(sellerId);
    if (running) return awhile(running);
    const p = this.fetchShared(sellerId, fp, refused).finally(() => this.fetching.delete(sellerId));
    this.fetching.set(sellerId, p);
    return p;
  }

  private async fetchShared(sellerId: string, fp: string, refused: string | undefined): Promise<TokenAnswer> {
    const { redis, ns } = this.deps;
    const key = tokenKey(ns, sellerId);
    const deadline = this.now() + TOKEN_WAIT_MS;
    for (;;) {
      const [[, waitMs], [, why]] = (await redis.multi().pttl(`${key}:wait`).get(`${key}:wait`).exec()) as [[unknown, number], [unknown, string | null]];
      if (waitMs > 0) return { waitMs, reason: why === 'unavailable' ? 'the token endpoint gave no usable answer' : 'the token endpoint asked to wait' };
      const locked = await redis.set(`${key}:lock`, this.id, 'PX', this.deps.timeoutMs + 2000, 'NX');
      if (locked === 'OK') {
        try {
          // another process may have written one since
          const h = await this.read(sellerId);
          if (this.usable(h, fp) && h.token !== refused && (refused !== undefined || this.fresh(h))) return { token: h.token, renewed: h.renewed };
          return await this.request(sellerId, fp, refused !== undefined);
        } finally {
          await releaseLock(redis, `${key}:lock`, this.id);
        }
      }
      // another process is fetching it: go on with a usable token, else wait for theirs
      const h = await this.read(sellerId);
      if (this.usable(h, fp) && h.token !== refused) return { token: h.token, renewed: h.renewed };
      if (this.now() > deadline) return { waitMs: TOKEN_WAIT_MS, reason: 'another process is still fetching the token' };
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private async request(sellerId: string, fp: string, afterRefusal: boolean): Promise<TokenAnswer> {
    const { redis, ns, client, credentials, log } = this.deps;
    const key = tokenKey(ns, sellerId);
    this.requests++;
    // the credentials sent and their fingerprint, taken together: a refusal pauses the seller
    // until the file holds other credentials than these (not than those read when it answers)
    const sent = { credentials: credentials.for(sellerId), fp: credentials.fingerprint(sellerId) };
    const out = await client.requestToken({ sellerId, credentials: sent.credentials, now: this.now() });
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
        return { rejected: out.reason, fp: sent.fp };
      case 'throttled': {
        const waitMs = Math.max(1, out.retryAfterMs ?? 60_000);
        await redis.set(`${key}:wait`, 'throttled', 'PX', waitMs);
        log.warn({ sellerId, retryAfterMs: waitMs }, 'the token endpoint answered throttled: token requests for the seller wait');
        return { waitMs, reason: 'the token endpoint asked to wait' };
      }
      default:
        // every process's rows wait, not only this one: one token request per TOKEN_RETRY_MS at most
        await redis.set(`${key}:wait`, 'unavailable', 'PX', TOKEN_RETRY_MS);
        log.warn({ sellerId, reason: out.reason }, 'token request got no usable answer; the rows wait and try again');
        return { waitMs: TOKEN_RETRY_MS, reason: out.reason };
    }
  }
}
