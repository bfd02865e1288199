/**
 * Per-seller and per-upload progress, read from the counters the workers keep
 * in Redis (the same counters the API's answers were counted into).
 */
import type { Config } from '../config.js';
import { bySellerId, namespaceOf, uploadIndexKey } from '../keys.js';
import type { RedisClient } from '../redis.js';
import { SellerLimiter } from '../rate-limit/limiter.js';
import { paceOf, waitingForPermit, type Pace } from './eta.js';
import { lostRows } from '../upload/lost-rows.js';
import { ALL, pauseOf, readPauses, type Pause } from '../steering/pauses.js';
import { readApiState, readFailingRows, type FailingRow } from '../steering/outage.js';
import { ruleSourceOf, type RuleSource } from '../rate-limit/seller-limits.js';
import { uploadKeysOf } from '../seller-home.js';
import { readPools } from '../worker/pool-presence.js';

/** How many failing rows a report shows while the API counts as unavailable. */
const FAILING_SHOWN = 10;

export interface UploadStatus {
  uploadId: string;
  sellerId: string;
  file: string;
  createdAt: number;
  total: number;
  registered: number;
  duplicate: number;
  failed: number;
  /** Rows not sent because the upload was cancelled. */
  cancelled: number;
  /** When the upload was cancelled (ms), or undefined. */
  cancelledAt: number | undefined;
  pending: number;
  /** Rows no job will ever finish: Redis lost them (upload/lost-rows.ts); not pending. */
  lost: number;
  invalid: number;
  done: boolean;
}

export interface SellerStatus {
  sellerId: string;
  nextPermitInMs: number;
  limit: number;
  windowMs: number;
  /** Rows already holding a later slot (waiting for a permit). */
  waitingForPermit: number;
  /** The seller's calls out at the API now (granted, not answered yet). */
  inProgress: number;
  etaMs: number;
  /** What sets the pace now: the seller's rule, or the pool (its rows wait for a worker). */
  pace: Pace;
  /** Sends within the last window + guard: the seller's current rate against its rule. */
  recentSends: number;
  /** Why the seller's rows are held (its own pause, else everyone's), or null. */
  paused: Pause | null;
  /** Where limit and windowMs come from. */
  ruleSource: RuleSource;
}

export interface StatusReport {
  uploads: UploadStatus[];
  sellers: SellerStatus[];
  /**
   * Whether the registration API counts as available (steering/outage.ts), and since when (ms).
   * While it does not: `failing`, the latest rows of the report's uploads whose calls got no
   * usable answer (at most FAILING_SHOWN), so that an operator can tell an outage (every
   * seller's rows) from rows the API refuses while it is up (one upload's).
   */
  api?: { available: boolean; since: number; failing?: FailingRow[] };
  /** Worker processes up and expected over every running pool (worker/pool-presence.ts): 0 and 0 when none runs. */
  pool?: { up: number; expected: number };
}

export interface StatusFilter {
  uploadId?: string | undefined;
  sellerId?: string | undefined;
  /** List `sellerId` even with no upload and no pause (its rule and sends, as for any seller). */
  listSeller?: boolean;
}

export function limiterFor(redis: RedisClient, config: Config): SellerLimiter {
  return new SellerLimiter(redis, {
    queuePrefix: config.queuePrefix,
    limit: config.rateLimitMax,
    windowMs: config.rateLimitWindowMs,
    guardMs: config.rateLimitGuardMs,
    holdMs: config.apiTimeoutMs,
  });
}

export interface StatusOptions {
  /**
   * Lost rows already counted, by upload id: those uploads are not checked again
   * (the check reads the upload's rows; a live view refreshes it now and then).
   * Uploads checked are added to it.
   */
  lostKnown?: Map<string, number>;
}

/** Reads in flight at once: the status of hundreds of sellers costs a few round trips, not one per upload. */
const READS_AT_ONCE = 100;

/** `fn` over `items`, at most `limit` at a time; the results in the items' order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

export async function readStatus(redis: RedisClient, config: Config, filter: StatusFilter = {}, opts: StatusOptions = {}): Promise<StatusReport> {
  const ns = namespaceOf(config.queuePrefix);
  const members = (await redis.zrange(uploadIndexKey(ns), '0', '-1'))
    .map((member) => member.split('/') as [string, string])
    .filter(([sellerId, uploadId]) => (!filter.uploadId || uploadId === filter.uploadId) && (!filter.sellerId || sellerId === filter.sellerId));
  const read = await mapLimit(members, READS_AT_ONCE, async ([sellerId, uploadId]): Promise<UploadStatus | undefined> => {
    const h = await redis.hgetall((await uploadKeysOf(redis, ns, sellerId, uploadId)).upload);
    if (!h.uploadId) return undefined; // expired
    const n = (k: string) => Number(h[k] ?? 0);
    const total = n('total');
    const finished = n('registered') + n('duplicate') + n('failed') + n('cancelled');
    let lost = finished < total ? opts.lostKnown?.get(uploadId) : 0;
    if (lost === undefined) {
      lost = (await lostRows(redis, config, ns, sellerId, uploadId, Date.now())).length;
      opts.lostKnown?.set(uploadId, lost);
    }
    return {
      uploadId, sellerId, file: h.file ?? '', createdAt: n('createdAt'), total,
      registered: n('registered'), duplicate: n('duplicate'), failed: n('failed'),
      cancelled: n('cancelled'), cancelledAt: h.cancelledAt ? Number(h.cancelledAt) : undefined,
      pending: Math.max(0, total - finished - lost), lost, invalid: n('invalid'), done: finished + lost >= total,
    };
  });
  const uploads = read.filter((u): u is UploadStatus => u !== undefined);
  const limiter = limiterFor(redis, config);
  const [pauses, state, pools] = await Promise.all([readPauses(redis, ns), readApiState(redis, ns), readPools(redis, ns)]);
  const api = state.available ? state : { ...state, failing: await readFailingRows(redis, ns, new Set(uploads.map((u) => u.uploadId)), FAILING_SHOWN) };
  const pendingOf = new Map<string, number>();
  for (const u of uploads) pendingOf.set(u.sellerId, (pendingOf.get(u.sellerId) ?? 0) + u.pending);
  // a seller paused on its own is shown (with why and by whom) before its first upload or after its last expired
  if (!filter.uploadId) {
    for (const sellerId of pauses.keys()) {
      if (sellerId !== ALL && (!filter.sellerId || sellerId === filter.sellerId) && !pendingOf.has(sellerId)) pendingOf.set(sellerId, 0);
    }
  }
  if (filter.listSeller && filter.sellerId && !pendingOf.has(filter.sellerId)) pendingOf.set(filter.sellerId, 0);
  const sellers = await mapLimit([...pendingOf.keys()].sort(bySellerId), READS_AT_ONCE, async (sellerId): Promise<SellerStatus> => {
    const [p, ruleSource] = await Promise.all([limiter.peek(sellerId), ruleSourceOf(redis, ns, sellerId)]);
    const pending = pendingOf.get(sellerId)!;
    const waiting = waitingForPermit({
      pending, plannedAhead: p.plannedAhead, deferredMs: p.deferredMs ?? 0, inFlight: p.inFlight ?? 0, limit: p.limit, recentSends: p.recentSends ?? 0,
    });
    const { etaMs, pace } = paceOf({
      pending, limit: p.limit, spanMs: p.windowMs + config.rateLimitGuardMs, nextPermitInMs: pending > 0 ? p.nextPermitInMs : 0,
      plannedAhead: waiting, recentSends: p.recentSends ?? 0, recentSpanMs: p.recentSpanMs ?? 0,
    });
    return {
      sellerId, nextPermitInMs: p.nextPermitInMs, limit: p.limit, windowMs: p.windowMs, waitingForPermit: waiting, inProgress: p.inFlight ?? 0, etaMs, pace,
      recentSends: p.recentSends ?? 0, paused: pauseOf(pauses, sellerId) ?? null, ruleSource,
    };
  });
  return { uploads, sellers, api, pool: { up: pools.up, expected: pools.expected } };
}

/** Rows are pending and no worker pool runs to send them (a report without the pool's figures says nothing). */
export function noPool(report: StatusReport): boolean {
  return report.pool !== undefined && report.pool.expected === 0 && report.uploads.some((u) => !u.done && u.pending > 0);
}

/** `state` of cli.md's status --json and the console's data-state. */
export type UploadState = 'waiting' | 'running' | 'throttled' | 'paused' | 'done' | 'cancelled';

export function uploadState(u: UploadStatus, seller: SellerStatus | undefined): UploadState {
  if (u.cancelledAt !== undefined) return 'cancelled';
  if (u.done) return 'done';
  if (seller?.paused) return 'paused';
  if (seller && (seller.nextPermitInMs > 0 || seller.waitingForPermit > 0)) return 'throttled';
  return u.registered + u.duplicate + u.failed > 0 ? 'running' : 'waiting';
}

/** For `status --json`: exactly the shape of cli.md, plus extra fields that do not rename any. */
export function statusJson(report: StatusReport) {
  const bySeller = new Map(report.sellers.map((s) => [s.sellerId, s]));
  // no ETA while nothing sends the seller's rows: paused, the API unavailable, or no pool running
  // (0 would read as "done now"; the text output says "ETA unknown" in the same cases)
  const held = (report.api !== undefined && !report.api.available) || noPool(report);
  const pending = new Set(report.uploads.filter((u) => !u.done && u.pending > 0).map((u) => u.sellerId));
  return {
    uploads: report.uploads.map((u) => ({
      uploadId: u.uploadId, sellerId: u.sellerId, total: u.total, registered: u.registered, duplicate: u.duplicate,
      failed: u.failed, cancelled: u.cancelled, pending: u.pending, done: u.done, file: u.file, invalid: u.invalid, lost: u.lost,
      state: uploadState(u, bySeller.get(u.sellerId)),
    })),
    sellers: report.sellers.map((s) => ({
      sellerId: s.sellerId, nextPermitInMs: s.nextPermitInMs, limit: s.limit, windowMs: s.windowMs,
      waitingForPermit: s.waitingForPermit, inProgress: s.inProgress, etaMs: (s.paused || held) && pending.has(s.sellerId) ? null : s.etaMs, pace: s.pace, recentSends: s.recentSends,
      paused: s.paused ? { reason: s.paused.reason, by: s.paused.by, since: s.paused.since } : null, ruleSource: s.ruleSource,
    })),
    api: report.api ?? { available: true, since: 0 },
    ...(report.pool ? { pool: report.pool } : {}),
  };
}

/**
 * One seller as `status --json` shows it, whether or not it has uploads or a pause
 * (a seller never seen gets the configured rule): the answer of the console's pause
 * and resume, and the seller of a webhook's pause event.
 */
export async function sellerStatusJson(redis: RedisClient, config: Config, sellerId: string) {
  const report = await readStatus(redis, config, { sellerId, listSeller: true });
  return statusJson(report).sellers.find((s) => s.sellerId === sellerId)!;
}
