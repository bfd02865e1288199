/**
 * One seller as the marketplace stand-in (marketplace.ts) keeps it: its client,
 * its rule as announced and as enforced, its sliding logs, what it registered,
 * and the counters its stats are made of. Pure: every time is passed in (ms on
 * the stand-in's clock).
 */
import { SlidingLog } from './sliding-log.js';

export interface MarketplaceRule {
  max: number;
  windowMs: number;
}

export interface MarketplaceClient {
  clientId: string;
  clientSecret: string;
}

export interface MarketplaceSellerStats {
  /** POST /oauth/token under this seller's clientId, whatever the answer. */
  tokenRequests: number;
  /** Their arrival times. */
  tokenRequestTimes: number[];
  tokensIssued: number;
  /** 401 INVALID_CLIENT answers to this seller's clientId. */
  tokenRefused: number;
  /** 429 TOO_MANY_TOKEN_REQUESTS answers. */
  tokenThrottled: number;
  /** Most of this seller's token requests being handled at once (arrival to answer written). */
  concurrentTokenRequestsMax: number;
  /** POST /v2/products with a token of this seller (valid or not), replays included. */
  calls: number;
  registered: number;
  replays: number;
  duplicates: number;
  invalid: number;
  /** 429 RATE_LIMITED answers. */
  tooMany: number;
  /** 401 TOKEN_EXPIRED answers. */
  expiredTokenCalls: number;
  /** 401 INVALID_TOKEN answers to a revoked token of this seller. */
  invalidTokenCalls: number;
  /** Arrival times of the calls the rule counted (valid token, not a replay), admitted or not. */
  arrivals: number[];
  /** Most of those arrivals in any trailing window of the rule enforced at each arrival. */
  maxArrivalsInWindow: number;
  /** Most admitted calls in any trailing window of the rule enforced at each arrival. */
  maxInWindow: number;
  announcedRule: MarketplaceRule;
  enforcedRule: MarketplaceRule;
  /** The last bodies of calls (parsed JSON, else the text), oldest first. */
  recentBodies: unknown[];
}

type Counters = Omit<MarketplaceSellerStats, 'maxArrivalsInWindow' | 'maxInWindow' | 'announcedRule' | 'enforcedRule'>;

/** @throws RangeError naming `what` when the rule is not whole numbers of at least 1. */
export function checkRule(rule: MarketplaceRule | undefined, what: string): MarketplaceRule {
  if (!rule || !Number.isInteger(rule.max) || rule.max < 1 || !Number.isInteger(rule.windowMs) || rule.windowMs < 1) {
    throw new RangeError(`${what} must be { max, windowMs } with whole numbers of at least 1`);
  }
  return { max: rule.max, windowMs: rule.windowMs };
}

/**
 * A rule announced at once and enforced later: until the enforcement time the
 * rule enforced so far stays.
 */
export class RuleSchedule {
  private enforced: MarketplaceRule;
  private pending: { rule: MarketplaceRule; at: number } | undefined;

  constructor(public announced: MarketplaceRule) {
    this.enforced = announced;
  }

  enforcedAt(now: number): MarketplaceRule {
    if (this.pending && now >= this.pending.at) {
      this.enforced = this.pending.rule;
      this.pending = undefined;
    }
    return this.enforced;
  }

  /** A later announcement replaces one not yet enforced. */
  announce(rule: MarketplaceRule, now: number, enforceAfterMs: number): void {
    this.enforcedAt(now);
    this.announced = rule;
    if (enforceAfterMs > 0) this.pending = { rule, at: now + enforceAfterMs };
    else {
      this.enforced = rule;
      this.pending = undefined;
    }
  }
}

export class MarketplaceSeller {
  readonly client: MarketplaceClient;
  readonly earlierSecrets: string[] = [];
  /** Tokens of an earlier generation are revoked (rotateSecret, revokeTokens). */
  generation = 0;
  readonly rule: RuleSchedule;
  readonly tokenLog = new SlidingLog();
  /** Admitted calls, and every counted arrival (admitted or not). */
  readonly admitted = new SlidingLog();
  readonly seen = new SlidingLog();
  /** X-Request-Id -> the answer stored for it; sellerProductCode -> productNo. */
  readonly byRequestId = new Map<string, { status: number; body: Record<string, unknown> }>();
  readonly byCode = new Map<string, string>();
  tokensInFlight = 0;
  readonly counters: Counters = {
    tokenRequests: 0, tokenRequestTimes: [], tokensIssued: 0, tokenRefused: 0, tokenThrottled: 0, concurrentTokenRequestsMax: 0,
    calls: 0, registered: 0, replays: 0, duplicates: 0, invalid: 0, tooMany: 0, expiredTokenCalls: 0, invalidTokenCalls: 0,
    arrivals: [], recentBodies: [],
  };

  constructor(readonly id: string, client: MarketplaceClient, rule: MarketplaceRule, private readonly keepBodies: number) {
    this.client = { ...client };
    this.rule = new RuleSchedule(rule);
  }

  rotate(newSecret: string): void {
    this.earlierSecrets.push(this.client.clientSecret);
    this.client.clientSecret = newSecret;
    this.generation++;
  }

  keepBody(body: unknown): void {
    const kept = this.counters.recentBodies;
    kept.push(body);
    if (kept.length > this.keepBodies) kept.splice(0, kept.length - this.keepBodies);
  }

  /** A copy: later calls do not change it. */
  stats(now: number): MarketplaceSellerStats {
    const c = this.counters;
    return {
      ...c, tokenRequestTimes: [...c.tokenRequestTimes], arrivals: [...c.arrivals], recentBodies: [...c.recentBodies],
      maxArrivalsInWindow: this.seen.maxInWindow, maxInWindow: this.admitted.maxInWindow,
      announcedRule: { ...this.rule.announced }, enforcedRule: { ...this.rule.enforcedAt(now) },
    };
  }
}
