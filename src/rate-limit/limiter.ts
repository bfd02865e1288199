/**
 * The per-seller limiter: typed calls to the Lua scripts in lua/. Decisions are
 * returned as values (rate-limiter-flexible style); only real failures throw.
 * All times in the replies are durations on Redis's clock, in ms.
 */
import { namespaceOf, sellerKeys, uploadKeys } from '../keys.js';
import { homeOf, pinsSellers } from '../seller-home.js';
import type { RedisClient } from '../redis.js';
import { keySlot } from '../queue-shards.js';
import type { LastGrant } from './lost-writes.js';

export interface LimiterSettings {
  /** QUEUE_PREFIX: the key namespace. */
  queuePrefix: string;
  limit: number;
  windowMs: number;
  guardMs: number;
  /** How long an unanswered send keeps its place (the API timeout). */
  holdMs: number;
}

export type LimiterEvent = 'throttled' | 'released' | undefined;

export interface Permit {
  granted: boolean;
  /** Granted: wait this long (a few ms at most), then send. Denied: ask again after this long. */
  waitMs: number;
  /** The seller's limit and window in force (an override, or the defaults). */
  limit: number;
  windowMs: number;
  event: LimiterEvent;
  /** Redis's clock (ms) when the decision was made. */
  redisNow: number;
  /** The row's planned slot (Redis ms). */
  slot: number;
  /** With `throttled` on a grant (a deferred seller's window is full): ms until the seller's next send may go. */
  nextPermitInMs?: number;
}

export type Outcome = 'registered' | 'duplicate' | 'failed' | 'cancelled';

export interface UploadCounts {
  total: number;
  registered: number;
  duplicate: number;
  failed: number;
  /** Rows not sent because a person cancelled the upload (absent: none). */
  cancelled?: number;
}

/** A row's final outcome, stored once for its upload. */
export interface FinalOutcome {
  outcome: Outcome;
  detail: object;
  /** Report the seller's next permit when a progress line is due (default true). */
  wantNextPermit?: boolean;
}

/** What complete() reports: whether this call counted the row, and the upload's counts after it. */
export interface Completion extends UploadCounts {
  counted: boolean;
  /**
   * When the count crossed a 10 % step of an unfinished upload: the ms until the
   * seller's next send may go (for the progress line's ETA); otherwise undefined.
   */
  nextPermitInMs?: number;
  /** With nextPermitInMs: what the progress line needs to tell the rule's pace from the pool's. */
  pace?: SellerPace;
  /** The send's place in the window (Redis ms): when its answer came, else when the completion ran. */
  placedAt?: number;
}

/** What tells whether a seller's rule or the pool sets its pace (progress/eta.ts paceOf). */
export interface SellerPace {
  plannedAhead: number;
  recentSends: number;
  recentSpanMs: number;
}

export interface PeekResult extends Partial<SellerPace> {
  nextPermitInMs: number;
  limit: number;
  windowMs: number;
  plannedAhead: number;
  /** How much longer the producer holds rows of the seller back (upload/deferral.ts; 0: none). */
  deferredMs?: number;
  /** Sends granted and not answered yet. */
  inFlight?: number;
}

const EVENTS: LimiterEvent[] = [undefined, 'throttled', 'released'];

export interface CompleteArgs {
  sellerId: string;
  /** The hash tag of the seller's keys (seller-home.ts), when the caller knows it: the job's. */
  home?: string;
  uploadId: string;
  row: number;
  member: string;
  sendId: string;
  /**
   * When the API's answer reached this process (performance.now()), for an answer
   * that came: the send's place is then that moment on Redis's clock, not the later
   * one at which the completion runs (see lua/complete-send.lua). Absent for no
   * answer (a timeout, a failed connection, a permit not used): the place is then
   * the completion's own time.
   */
  answeredAt?: number;
  /**
   * The permit (`sendId`) was granted and not used: no call left with it (the seller
   * was paused, the upload cancelled, the API found down). Its entry leaves `sent`
   * instead of taking a place there, and this process stops vouching for it.
   */
  unsent?: boolean;
}

/** Where BullMQ keeps the queue's jobs: its active list and the prefix of a job's key. */
export interface QueueKeys {
  active: string;
  jobPrefix: string;
}

/** The row whose completion fetches the next job. */
export interface FinishedRow {
  jobId: string;
  sellerId: string;
}

/** A permit asked in the write that finished the previous row, for the job BullMQ fetched with it. */
export interface PermitAhead {
  jobId: string;
  sendId: string;
  permit: Permit;
}

/** What the job processor needs from a limiter (the bench plugs in the alternatives). */
export interface PermitLimiter {
  readonly settings: LimiterSettings;
  /** `home`: the hash tag of the seller's keys, the job's (seller-home.ts); its own id when absent. */
  acquire(sellerId: string, member: string, sendId: string, home?: string): Promise<Permit>;
  /**
   * The permit for the job BullMQ locks next with `token` (lua/permit-next.lua), or
   * undefined when it fetched none. On Redis Cluster, for a pinned seller only;
   * absent where not offered. `together`: the asks written behind completions in
   * the same write; `expectedAt`: where in the active list this one's job should lie
   * (0: the head), looked at first. `finished`: the row whose completion fetches the
   * job; undefined for a fetch of the worker's own (BullMQ's moveToActive).
   */
  permitNext?(queue: QueueKeys, token: string, nonce: string, finished: FinishedRow | undefined, together?: number, expectedAt?: number): Promise<PermitAhead | undefined>;
  complete(args: CompleteArgs, final: FinalOutcome | undefined, retentionS: number): Promise<Completion>;
  block(sellerId: string, waitMs: number, sendId: string, home?: string): Promise<number>;
  /** Read-only: when the seller's next send may go, and its recent sends (for ETAs). */
  peek(sellerId: string): Promise<PeekResult>;
}

/** Sellers whose last grant a process tracks on a cluster (the most recent ones). */
const MAX_TRACKED_GRANTS = 2000;

/**
 * The answer of a row sent at its planned slot always joins the seller's average
 * answer time (complete-send.lua); of the others, one in this many (the first a
 * process sees among them), and the rest leave the average alone (no read, no
 * write). The average is only a margin for planning, and it moves a fifth of the
 * way per sample: a sample of an unthrottled seller's answers keeps it as well as
 * all of them, for a quarter of its reads and writes. A seller with no average
 * yet gets one from its first sampled answer; until then a process plans with
 * its own recent answer time (the hint), which it has from its first planned row.
 */
export const ANSWER_SAMPLE_EVERY = 4;

/** Sends granted and not yet answered that a process tracks: its slots and its reserved waits. */
const MAX_SENDS_IN_FLIGHT = 1024;

export class SellerLimiter implements PermitLimiter {
  private readonly ns: string;
  /**
   * The answer time (ms, Redis's clock) of rows this process sent at their planned
   * slot: a moving average, and when it last changed. Passed with each ask as the
   * margin for planning far windows (see sliding-window.lua).
   */
  private answerHint: { ms: number; at: number } | undefined;
  /**
   * Each send this process was granted and not yet answered: when it goes (Redis ms,
   * its place in `plan`), passed back with its answer, and whether it was granted on
   * a re-check (a planned row: its answer time joins the hint).
   */
  private readonly sends = new Map<string, { at: number; planned: boolean }>();
  /**
   * Until when (Redis ms) this Redis may have lost sends (lost-writes.ts): no
   * permit before it. While a (re)connected Redis is checked, asks wait for `gate`
   * (undefined when open: an ask then leaves in the same turn, so the permit asked
   * ahead still joins the completion's write).
   */
  suspectUntil = 0;
  /**
   * On Redis Cluster: until when (Redis ms) each slot's master may have lost sends
   * (cluster-failover.ts): only the sellers on a master that failed over with
   * losses wait. Undefined elsewhere.
   */
  suspectSlots: Float64Array | undefined;
  gate: Promise<void> | undefined;
  /** The last send this process was granted: after a reconnect, still in Redis unless writes were lost (lost-writes.ts). */
  lastGrant: LastGrant | undefined;
  /** The grant before lastGrant: vouched for again when lastGrant is given back unused. */
  private grantBefore: LastGrant | undefined;
  /**
   * On Redis Cluster: each seller's last grant to this process, by its `sent` key
   * (masters fail over independently, so each vouches only for its own writes;
   * cluster-failover.ts). Undefined elsewhere.
   */
  grants: Map<string, LastGrant> | undefined;
  /**
   * Times the connection closed (the worker process counts them). An ask that was
   * out when it closed is sent again by ioredis to whatever master answers next,
   * before that master is checked: its grant is not used, and the row asks again.
   */
  connectionDrops = 0;
  /** Answers of rows not sent at a planned slot, for ANSWER_SAMPLE_EVERY. */
  private unplannedAnswers = 0;
  /**
   * Whether answers have shown that the marketplace announces sellers' rules
   * (seller-limits.ts): every seller then sends one row first after a span without
   * answers (sliding-window.lua). The worker process sets it from what the pool
   * has seen; false by default.
   */
  rulesAnnounced: () => boolean = () => false;

  constructor(
    private readonly redis: RedisClient,
    readonly settings: LimiterSettings,
    /** permitNext serves only sellers whose id starts with this (the bench runs several limiters in one pool). */
    private readonly sellerPrefix = '',
  ) {
    this.ns = namespaceOf(settings.queuePrefix);
  }

  /** The seller's limiter keys; `home`: the hash tag they carry (seller-home.ts), the job's. */
  keys(sellerId: string, home: string = sellerId) {
    return sellerKeys(this.ns, sellerId, home);
  }

  /** lua/sliding-window.lua: one call per ask; a row asks at most twice on the normal path. */
  async acquire(sellerId: string, member: string, sendId: string, home?: string): Promise<Permit> {
    const k = this.keys(sellerId, home);
    const s = this.settings;
    if (this.gate) await this.gate;
    const drops = this.connectionDrops;
    const reply = await this.redis.acquirePermit(
      k.plan, k.sent, k.rule, k.blocked, k.throttle, k.lag, k.defer, k.apiRule,
      member, sendId, s.limit, s.windowMs, s.guardMs, s.holdMs, ...this.hintArgs(),
      Math.max(this.suspectUntil, this.suspectSlots?.[keySlot(k.plan)] ?? 0), this.rulesAnnounced() ? 1 : 0,
    );
    if (reply[0] === 1 && this.connectionDrops !== drops) {
      const [, , limit, windowMs, , redisNow, slot] = reply;
      return { granted: false, waitMs: 100, limit, windowMs, event: undefined, redisNow, slot };
    }
    if (reply[0] === 1) this.noteGrant({ sent: k.sent, sendId, at: reply[5] });
    return this.permitOf(sendId, reply);
  }

  private noteGrant(grant: LastGrant): void {
    this.grantBefore = this.lastGrant;
    this.lastGrant = grant;
    if (!this.grants) return;
    this.grants.delete(grant.sent);
    this.grants.set(grant.sent, grant);
    // bounded: the oldest first (a Map keeps insertion order)
    if (this.grants.size > MAX_TRACKED_GRANTS) this.grants.delete(this.grants.keys().next().value!);
  }

  /**
   * A grant given back unused has left `sent`: this process no longer vouches for it
   * (after a reconnect, lost-writes.ts would find it missing and suspect lost writes).
   * It vouches for the grant before it instead, which is still in Redis.
   */
  private forgetGrant(sent: string, sendId: string): void {
    if (this.grantBefore?.sendId === sendId) this.grantBefore = undefined;
    if (this.lastGrant?.sendId === sendId) {
      this.lastGrant = this.grantBefore;
      this.grantBefore = undefined;
    }
    if (this.grants?.get(sent)?.sendId === sendId) this.grants.delete(sent);
  }

  /** `together`: how many asks ahead went in the same write (how deep the job may lie in the active list). */
  async permitNext(queue: QueueKeys, token: string, nonce: string, finished: FinishedRow | undefined, together = 1, expectedAt = 0): Promise<PermitAhead | undefined> {
    const s = this.settings;
    if (this.gate) await this.gate;
    const drops = this.connectionDrops;
    const reply = await this.redis.permitNext(
      queue.active, queue.jobPrefix, token, this.ns, nonce, this.sellerPrefix,
      s.limit, s.windowMs, s.guardMs, s.holdMs, ...this.hintArgs(), finished?.jobId ?? '',
      // on a cluster: the queue's slot is its pinned sellers' (seller-home.ts), and only they are served
      Math.max(this.suspectUntil, this.suspectSlots?.[keySlot(queue.active)] ?? 0), together, pinsSellers(this.redis) ? 1 : 0, expectedAt,
      this.rulesAnnounced() ? 1 : 0,
    );
    // out when the connection closed: the row asks for its own permit, through the check
    if (reply.length === 0 || this.connectionDrops !== drops) return undefined;
    const [jobId, sendId, granted, waitMs, limit, windowMs, event, redisNow, slot, planned, next, sellerId, home] = reply;
    if (granted === 1) this.noteGrant({ sent: this.keys(sellerId, home || sellerId).sent, sendId, at: redisNow });
    return { jobId, sendId, permit: this.permitOf(sendId, [granted, waitMs, limit, windowMs, event, redisNow, slot, planned, next]) };
  }

  private permitOf(sendId: string, [granted, waitMs, limit, windowMs, event, redisNow, slot, planned, next]: [...[number, number, number, number, number], number, number, 0 | 1, number]): Permit {
    if (granted === 1) {
      this.sends.set(sendId, { at: redisNow + waitMs, planned: planned === 1 });
      if (this.sends.size > MAX_SENDS_IN_FLIGHT) this.sends.delete(this.sends.keys().next().value!);
    }
    return { granted: granted === 1, waitMs, limit, windowMs, event: EVENTS[event], redisNow, slot, ...(next > 0 ? { nextPermitInMs: next } : {}) };
  }

  /** The hint as the scripts take it: its ms (-1: none) and when it was measured. */
  private hintArgs(): [number, number] {
    return [this.answerHint?.ms ?? -1, this.answerHint?.at ?? 0];
  }

  /** The hint this process passes with its next ask (undefined until a planned row was answered). */
  get currentAnswerHint(): { ms: number; at: number } | undefined {
    return this.answerHint;
  }

  /** A planned row's send (sent at `sentAt`) was answered at `redisNow`: its answer time joins the hint. */
  private learnAnswer(sentAt: number, redisNow: number): void {
    const sample = redisNow - sentAt;
    // as complete-send.lua does for the seller's average: a stall longer than W + G is not an answer time
    if (sample < 0 || sample >= this.settings.windowMs + this.settings.guardMs) return;
    const old = this.answerHint?.ms;
    this.answerHint = { ms: old === undefined ? sample : Math.floor(old * 0.8 + sample * 0.2), at: redisNow };
  }

  /**
   * lua/complete-send.lua: the answer (or error) arrived. Moves the send's place to
   * now (a permit not used, `unsent`: takes it out of `sent`) and, when `outcome`
   * is given, counts the row once for its upload.
   */
  complete(
    args: CompleteArgs,
    final: FinalOutcome | undefined,
    retentionS: number,
  ): Promise<Completion & { redisNow: number }> {
    // with its home given, the script is issued in this very turn (a count sent ahead of its job's completion)
    if (args.home === undefined && pinsSellers(this.redis)) {
      return homeOf(this.redis, this.ns, args.sellerId).then((home) => this.completeAt(home, args, final, retentionS));
    }
    return this.completeAt(args.home ?? args.sellerId, args, final, retentionS);
  }

  private async completeAt(
    home: string,
    args: CompleteArgs,
    final: FinalOutcome | undefined,
    retentionS: number,
  ): Promise<Completion & { redisNow: number }> {
    const k = this.keys(args.sellerId, home);
    const u = uploadKeys(this.ns, args.sellerId, args.uploadId, home);
    const s = this.settings;
    const send = this.sends.get(args.sendId);
    this.sends.delete(args.sendId);
    const sample = args.sendId !== '' && !args.unsent && (send?.planned === true || this.unplannedAnswers++ % ANSWER_SAMPLE_EVERY === 0);
    // how long ago the answer came, taken as the command is issued: whatever delays it on
    // its way to Redis makes the place later, never earlier than the answer (a duration on
    // this host's monotonic clock, so the host's wall clock plays no part)
    const answeredMsAgo = args.answeredAt === undefined ? 0 : Math.max(0, Math.floor(performance.now() - args.answeredAt));
    // before the call: a reconnect's check must never look for the grant once it may be gone
    if (args.unsent) this.forgetGrant(k.sent, args.sendId);
    const [counted, total, registered, duplicate, failed, redisNow, nextPermitInMs, plannedAhead, recentSends, recentSpanMs, cancelled, placedAt] = await this.redis.completeSend(
      k.plan, k.sent, u.upload, u.rows, k.lag, k.rule, k.blocked,
      args.member, args.sendId, args.row, final?.outcome ?? '', final ? JSON.stringify(final.detail) : '',
      s.limit, s.windowMs, s.guardMs, retentionS, final?.wantNextPermit === false ? 0 : 1, send?.at ?? -1,
      sample ? 1 : 0, answeredMsAgo, args.unsent ? 1 : 0, s.holdMs,
    );
    const placed = placedAt ?? redisNow;
    if (send?.planned && !args.unsent) this.learnAnswer(send.at, placed);
    return {
      counted: counted === 1, total, registered, duplicate, failed, cancelled: cancelled ?? 0, redisNow, placedAt: placed,
      nextPermitInMs: nextPermitInMs >= 0 ? nextPermitInMs : undefined,
      pace: nextPermitInMs >= 0 ? { plannedAhead, recentSends, recentSpanMs } : undefined,
    };
  }

  /** lua/block-seller.lua: the API said 429; every row of the seller waits `waitMs`. */
  async block(sellerId: string, waitMs: number, sendId: string, home?: string): Promise<number> {
    const k = this.keys(sellerId, home ?? (await homeOf(this.redis, this.ns, sellerId)));
    return this.redis.blockSeller(k.blocked, k.sent, Math.max(0, Math.ceil(waitMs)), sendId, this.settings.windowMs + this.settings.guardMs);
  }

  /** lua/peek-permit.lua: read-only; when a new row of the seller could be sent. */
  async peek(sellerId: string): Promise<PeekResult> {
    const k = this.keys(sellerId, await homeOf(this.redis, this.ns, sellerId));
    const s = this.settings;
    const [nextPermitInMs, limit, windowMs, plannedAhead, recentSends, recentSpanMs, deferredMs, inFlight] = await this.redis.peekPermit(
      k.plan, k.sent, k.rule, k.blocked, k.defer, s.limit, s.windowMs, s.guardMs, s.holdMs,
    );
    return { nextPermitInMs, limit, windowMs, plannedAhead, recentSends, recentSpanMs, deferredMs, inFlight };
  }
}
