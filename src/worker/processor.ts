/**
 * The job processor: one row -> one permit -> one API call -> one outcome.
 *
 * - The permit: on a single Redis, usually asked in the write that finished the
 *   row before (lua/permit-next.lua), else asked here (lua/sliding-window.lua).
 * - No permit: the job moves to delayed until the time Redis gave
 *   (`job.moveToDelayed` + DelayedError): no attempt used, other sellers flow.
 * - 201/200 registered, 409 duplicate, 400/422 failed: the row is final and counted once.
 * - 429: the wait (Retry-After, at most an hour, else one window W + G) is written
 *   into the seller's limiter and the job is delayed, without using an attempt.
 * - 5xx, timeout, connection error: thrown, so BullMQ retries with backoff and the
 *   same Idempotency-Key; the last attempt ends the row as failed with the reason.
 *   A transient answer that is an answer (a 202, a 201 without a productId) is
 *   retried the same way but counts toward no outage (steering/outage.ts).
 * - The call itself is the adapter's (marketplace.md): a rule it announces is in
 *   force before the row is counted; an adapter fault fails that row only.
 * - A paused seller's row is held aside (delayed, no attempt used) before it asks
 *   for a permit and again right before its call would leave.
 * - Unauthorized: one fresh token and one resend with the same key (no attempt);
 *   refused again, or without tokens, the seller is paused ("credentials rejected").
 */
import { randomBytes } from 'node:crypto';
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '../logger.js';
import { uploadKeys, namespaceOf, rowMember } from '../keys.js';
import { writeTogether, type RedisClient } from '../redis.js';
import type { Outcome, Permit, PermitLimiter, QueueKeys, UploadCounts } from '../rate-limit/limiter.js';
import type { RegistrationClient } from '../registration/client.js';
import { throttleWaitMs, type ApiOutcome } from '../registration/outcome.js';
import type { CredentialStore } from '../registration/credentials.js';
import type { SellerTokens } from '../registration/tokens.js';
import type { PauseWatch } from '../steering/pause-watch.js';
import { HELD_RECHECK_MS, noteHeld, pauseSeller, type Pause } from '../steering/pauses.js';
import { cancelDetailOf } from '../steering/cancel.js';
import { apiProbeKey, clearApiFailing, usableAnswer } from '../steering/outage.js';
import { logRowCounted, logThrottleEvent, type Rate } from '../progress/progress-log.js';
import { PRIORITY, type QueueSet, type RegistrationJob } from '../queue.js';
import { replayRegistered, type Replay, type ReplayDeps } from '../steering/replay-check.js';
import { AnnouncedRules } from './announced-rules.js';
import { ApiHealth } from './api-health.js';
import { PermitsAhead } from './permits-ahead.js';

/** A failed attempt that BullMQ should retry (with backoff and the same key). */
export class TransientFailure extends Error {
  override readonly name = 'TransientFailure';
  readonly retryable = true;
}

export interface ProcessorDeps {
  redis: RedisClient;
  limiter: PermitLimiter;
  api: RegistrationClient;
  log: Logger;
  /** The host's clock (ms), used only to turn Redis's durations into BullMQ timestamps. */
  now: () => number;
  maxAttempts: number;
  uploadRetentionS: number;
  /**
   * True when the row's count and BullMQ's completion of its job go down one
   * connection to one Redis: the count is written first and Redis runs the two in
   * that order, so the worker hands the job back without waiting for the count's
   * reply (one round trip less per row). On Cluster they reach different nodes,
   * so the worker waits for the count before the job may finish.
   */
  countAhead?: boolean | ((job: Job<RegistrationJob>) => boolean);
  /**
   * BullMQ's keys for the queue, when the worker may ask for the next row's permit
   * in the write that finishes this one (lua/permit-next.lua: single Redis, with
   * countAhead, and a limiter that offers permitNext).
   */
  permitAheadFor?: (job: Job<RegistrationJob>) => QueueKeys;
  /** Called with the host time a delayed job is due (see wake-kick.ts). */
  onDelayed?: (dueAtMs: number) => void;
  /** The seller's credentials for the adapter (SELLER_CREDENTIALS_FILE). */
  credentials?: CredentialStore;
  /** Present when the adapter fetches tokens: the pool's shared tokens. */
  tokens?: SellerTokens;
  /** The pauses in force (read every PAUSE_POLL_MS); absent: nothing is ever paused (bench peers). */
  pauses?: PauseWatch;
  /** The breaker closed by this process's probe: release the rows held for the outage. */
  onApiBack?: () => void;
  /** The queues, for bringing a seller's deferred rows forward when the marketplace raises its rule (upload/deferral.ts). */
  queues?: QueueSet;
  /** Observes what happens (metrics, bench): each limiter ask, delay, 429, and each row counted with its outcome. */
  onEvent?: (event: ProcessorEvent, sellerId: string, detail?: { waitMs?: number }) => void;
}

export type ProcessorEvent = Outcome | 'permit' | 'permitAhead' | 'delayed' | 'tooMany' | 'held' | 'unauthorized';

/**
 * A row denied until its planned slot is woken this much before it (ms). The
 * slot holds a guessed answer time (lua/lib/acquire-permit.lua, planMargin);
 * the re-check, a moment before the slot, finds in `sent` when the row's place
 * really frees and grants it for then, earlier or later than the slot, and the
 * row waits in-process. Woken at the slot itself, it would leave at the slot
 * plus the wake (the delayed set's promotion, the fetch and the re-check's own
 * round trip: 20-30 ms in a traced bench run), and every later window of the
 * seller would start that much and the guess's excess late.
 */
export const WAKE_LEAD_MS = 100;

/** When a denied row should ask again: a little before its slot when it waits for its slot. */
export function wakeBefore(permit: Permit): number {
  const forSlot = permit.redisNow + permit.waitMs === permit.slot;
  // the limiter grants a woken row in-process up to a quarter of W + G (at most 150 ms) ahead
  const leads = forSlot && permit.waitMs > 4 * WAKE_LEAD_MS && permit.windowMs >= 8 * WAKE_LEAD_MS;
  return leads ? permit.waitMs - WAKE_LEAD_MS : permit.waitMs;
}

export type ProcessResult = { outcome: Outcome; productId?: string; reason?: string };

export type Processor = ((job: Job<RegistrationJob>, token?: string) => Promise<ProcessResult>) & {
  /** Resolves once no row is being processed and every count sent ahead has been answered (before closing the connection). */
  settled(): Promise<void>;
  /**
   * BullMQ is about to fetch a job on `queue` with `token` in a write of its own (a
   * worker's first fetch, a fetch after a row was delayed or once the queue had run
   * dry): the fetched row's permit is asked behind it, in the same write, as behind a
   * completion. A no-op for a limiter without permitNext.
   */
  fetching(queue: QueueKeys, token: string): void;
};

/** The hash tag of the job's seller's keys: its pinned shard's on a cluster (seller-home.ts), else its own. */
const homeOfJob = (job: Job<RegistrationJob>): string => job.data.home ?? job.data.sellerId;

export function createProcessor(deps: ProcessorDeps): Processor {
  const { limiter, api, log } = deps;
  const ns = namespaceOf(limiter.settings.queuePrefix);
  const countsInFlight = new Set<Promise<void>>();
  const permits = new PermitsAhead(limiter, log, randomBytes(6).toString('hex'));
  const health = new ApiHealth({ redis: deps.redis, ns, log, pauses: deps.pauses, now: deps.now, onApiBack: deps.onApiBack });
  const rules = new AnnouncedRules({ redis: deps.redis, ns, log, settings: limiter.settings, now: deps.now, pauses: deps.pauses, queues: deps.queues });

  /** A permit granted and not used: no call left with it, so it holds no place in the seller's window (no row counted). */
  async function giveBack(job: Job<RegistrationJob>, granted: { permit: Permit; sendId: string } | undefined): Promise<void> {
    if (!granted?.permit.granted) return;
    const { sellerId, uploadId, row } = job.data;
    await limiter.complete({ sellerId, home: homeOfJob(job), uploadId, row, member: rowMember(uploadId, row), sendId: granted.sendId, unsent: true }, undefined, deps.uploadRetentionS);
  }

  /** The seller is paused: the row is set aside, delayed until a resume promotes it (or HELD_RECHECK_MS), no attempt used. */
  async function hold(job: Job<RegistrationJob>, token: string | undefined, why: { reason: string }, forOutage = false): Promise<never> {
    deps.onEvent?.('held', job.data.sellerId);
    log.debug({ sellerId: job.data.sellerId, row: job.data.row, reason: why.reason }, 'row held');
    // a paused seller's row waits for its resume to promote it; a row held for an outage
    // comes back in 2-5 s by itself, so that the pool always has rows to probe with
    if (!forOutage && job.id) await noteHeld(deps.redis, ns, job.data.sellerId, job.queueQualifiedName, job.id);
    const dueAt = deps.now() + (forOutage ? OUTAGE_RECHECK_MS + Math.floor(Math.random() * OUTAGE_RECHECK_MS * 1.5) : HELD_RECHECK_MS);
    await job.moveToDelayed(dueAt, token);
    deps.onDelayed?.(dueAt);
    throw new DelayedError();
  }

  /**
   * A call of the row got no usable answer: kept in the job from the first such call on
   * (`failingSince`, the grant's time), whichever way the row goes. Its last attempt is
   * judged by it, and a cancel says the marketplace may have the row (cancelDetailOf).
   */
  async function noteFailing(job: Job<RegistrationJob>, grantedAt: number): Promise<void> {
    if (job.data.failingSince === undefined) await job.updateData({ ...job.data, failingSince: grantedAt }).catch(() => undefined);
  }

  /** The upload was cancelled: the row is counted cancelled and sends nothing. */
  async function cancelRow(job: Job<RegistrationJob>, granted: { permit: Permit; sendId: string } | undefined): Promise<ProcessResult> {
    const { sellerId, uploadId, row } = job.data;
    const detail = cancelDetailOf(job);
    const counts = await limiter.complete(
      { sellerId, home: homeOfJob(job), uploadId, row, member: rowMember(uploadId, row), sendId: granted?.permit.granted ? granted.sendId : '', unsent: true },
      { outcome: 'cancelled', detail, wantNextPermit: false },
      deps.uploadRetentionS,
    );
    if (counts.counted) log.debug({ sellerId, uploadId, row }, 'upload cancelled: row not sent');
    return { outcome: 'cancelled', reason: detail.reason };
  }

  /**
   * The marketplace refused the seller's credentials: the seller is paused, the row held.
   * `fp`: the fingerprint of the credentials refused (taken when they were sent), so that the
   * pause ends once the file holds others, also when it changed while the request was out.
   */
  async function pauseForCredentials(job: Job<RegistrationJob>, token: string | undefined, why: string, fp: string): Promise<never> {
    const { sellerId } = job.data;
    // the file may hold other credentials since this call left (the refusal is then the old ones'): this
    // process may not have read it yet (it looks every few seconds). Paused here, the seller was resumed
    // again at once by the processes that had, and told as paused and resumed once more for each such call
    if (deps.credentials) {
      deps.credentials.check();
      if (deps.credentials.fingerprint(sellerId) !== fp) {
        log.info({ sellerId }, 'the marketplace refused credentials the file no longer holds: the row goes again with the new ones');
        return delay(job, token, 1);
      }
    }
    const pause: Pause = { reason: `credentials rejected: ${why}`, by: 'credentials', since: deps.now(), fp };
    const { pause: inForce, changed } = await pauseSeller(deps.redis, ns, sellerId, pause);
    deps.pauses?.note(sellerId, inForce);
    if (changed) log.warn({ sellerId, reason: pause.reason }, 'seller paused: the marketplace refused its credentials; its rows wait until they change or `resume --seller`');
    return hold(job, token, inForce);
  }

  /** Sellers whose Retry-After was cut to MAX_RETRY_AFTER_MS and said so (once each). */
  const clampedFor = new Set<string>();

  const OUTAGE = { reason: 'the registration API is unavailable' };
  /** A row held for an outage looks again after this, plus up to 1.5 times it (ms). */
  const OUTAGE_RECHECK_MS = 2000;

  const replays: ReplayDeps = {
    redis: deps.redis, ns, api, limiter, log, credentials: deps.credentials, tokens: deps.tokens,
    paused: (sellerId) => deps.pauses?.of(sellerId) !== undefined, now: deps.now,
  };

  async function uploadCounts(sellerId: string, home: string, uploadId: string): Promise<UploadCounts> {
    const v = await deps.redis.hmget(uploadKeys(ns, sellerId, uploadId, home).upload, 'total', 'registered', 'duplicate', 'failed');
    const [total, registered, duplicate, failed] = v.map((x) => Number(x ?? 0)) as [number, number, number, number];
    return { total, registered, duplicate, failed };
  }

  async function delay(job: Job<RegistrationJob>, token: string | undefined, waitMs: number): Promise<never> {
    deps.onEvent?.('delayed', job.data.sellerId, { waitMs });
    log.debug({ sellerId: job.data.sellerId, row: job.data.row, waitMs }, 'no permit yet: job delayed');
    if (job.priority !== PRIORITY.DUE_ROW) await job.changePriority({ priority: PRIORITY.DUE_ROW });
    const dueAt = deps.now() + Math.max(1, waitMs);
    await job.moveToDelayed(dueAt, token);
    deps.onDelayed?.(dueAt);
    throw new DelayedError();
  }

  async function processRegistration(job: Job<RegistrationJob>, token?: string): Promise<ProcessResult> {
    const { sellerId, uploadId, row, product } = job.data;
    const home = homeOfJob(job);
    const member = rowMember(uploadId, row);
    const rate = (limit: number, windowMs: number): Rate => ({ limit, windowMs, guardMs: limiter.settings.guardMs });

    const ahead = await permits.take(job.id, token);
    if (deps.pauses?.cancelled(uploadId)) return cancelRow(job, ahead);
    const paused = deps.pauses?.of(sellerId);
    if (paused) {
      await giveBack(job, ahead);
      return hold(job, token, paused);
    }
    // the API counts as unavailable: one row a second in the pool goes as a probe, the rest wait
    let probe = false;
    if (deps.pauses?.apiDown()) {
      probe = await health.mayProbe();
      if (!probe) {
        await giveBack(job, ahead);
        return hold(job, token, OUTAGE, true);
      }
    }
    let accessToken: { token: string; renewed: boolean } | undefined;
    if (deps.tokens) {
      const t = await deps.tokens.get(sellerId);
      if (!('token' in t)) await giveBack(job, ahead);
      if ('rejected' in t) return pauseForCredentials(job, token, t.rejected, t.fp);
      if ('waitMs' in t) return delay(job, token, t.waitMs);
      accessToken = t;
    }

    const granted = await permits.permitFor(ahead, sellerId, member, home);
    const { permit, sendId } = granted;
    deps.onEvent?.('permit', sellerId);
    if (granted === ahead) deps.onEvent?.('permitAhead', sellerId);
    if (permit.event && log.isLevelEnabled('info')) {
      // the line's counts are read beside the row, not before it: the grant that releases a seller
      // is its window's first send, and every later window would open a round trip late
      const event = permit.event;
      uploadCounts(sellerId, home, uploadId)
        .then((counts) => logThrottleEvent(log, event, sellerId, uploadId, counts, rate(permit.limit, permit.windowMs), permit.nextPermitInMs ?? permit.waitMs))
        .catch((err: Error) => log.debug({ err, sellerId }, 'throttle event not logged: the upload\'s counts could not be read'));
    }
    if (!permit.granted) {
      // a probe that must wait for its seller's rule gives its turn to a row that can go now
      if (probe) await deps.redis.del(apiProbeKey(ns)).catch(() => undefined);
      return delay(job, token, wakeBefore(permit));
    }
    // a permit for a moment from now (a few ms): its place is reserved
    if (permit.waitMs > 0) await new Promise((r) => setTimeout(r, permit.waitMs + 1));
    // a cancel or a pause that came while the permit was asked: the call does not leave
    if (deps.pauses?.cancelled(uploadId)) return cancelRow(job, granted);
    const pausedNow = deps.pauses?.of(sellerId);
    if (pausedNow) {
      await giveBack(job, granted);
      return hold(job, token, pausedNow);
    }
    if (!probe && deps.pauses?.apiDown()) {
      await giveBack(job, granted);
      return hold(job, token, OUTAGE, true);
    }

    let outcome: ApiOutcome;
    const sentFp = deps.credentials?.fingerprint(sellerId) ?? 'none';
    const callStart = performance.now();
    try {
      outcome = await api.register({
        sellerId, uploadId, row, idempotencyKey: member, product, attributes: job.data.attributes ?? {},
        credentials: deps.credentials?.for(sellerId), ...(accessToken ? { token: accessToken.token } : {}), now: deps.now(),
      });
    } catch (err) {
      outcome = { kind: 'transient', reason: `the request could not be made (${(err as Error).message})` };
    }
    // the API answered for the row (a transient outcome may be a timeout: no answer, and the
    // request may still reach it): the send's place is this moment (limiter.complete)
    const usable = usableAnswer(outcome);
    const answered = usable === true && outcome.kind !== 'throttled';
    const answerAt = performance.now();
    const ids = { sellerId, home, uploadId, row, member, sendId, ...(answered ? { answeredAt: answerAt } : {}) };
    // an adapter fault says nothing of the API; anything else answered is a usable answer. When
    // on Redis's clock: the grant, and the answer (the send, the grant plus the wait it asked
    // for, and the call's length)
    const times = { grantedAt: permit.redisNow, answeredAt: permit.redisNow + permit.waitMs + Math.round(answerAt - callStart) };
    const noted = usable === undefined ? undefined : await health.noteAnswer(usable, member, times, job.data.failingSince);
    if (noted?.down) {
      // no usable answer while the API is down: the row waits for it, without using an attempt
      await limiter.complete(ids, undefined, deps.uploadRetentionS);
      await noteFailing(job, permit.redisNow);
      return hold(job, token, OUTAGE, true);
    }
    // a rule the marketplace announced is in force before this row is counted and any next permit
    if (outcome.rule) {
      await rules.note(sellerId, home, outcome.rule).catch((err: Error) => log.warn({ err, sellerId }, 'could not record the rule the marketplace announced'));
    }

    if (outcome.kind === 'throttled') {
      deps.onEvent?.('tooMany', sellerId);
      const { retryAfterMs } = outcome;
      const wait = throttleWaitMs(retryAfterMs, permit.windowMs, limiter.settings.guardMs);
      if (wait.clamped && !clampedFor.has(sellerId)) {
        clampedFor.add(sellerId);
        if (clampedFor.size > 10_000) clampedFor.delete(clampedFor.values().next().value!);
        log.warn({ sellerId, retryAfterMs, waitMs: wait.waitMs }, 'the marketplace asked the seller to wait longer than an hour: it waits an hour, then its next row asks again (said once per seller and process)');
      }
      // the wait is for the seller's rows: a Redis that cannot note it fails no row, this one waits alone
      const waitMs = await limiter.block(sellerId, wait.waitMs, sendId, home).catch((err: Error) => {
        log.warn({ err, sellerId, waitMs: wait.waitMs }, 'could not note the marketplace\'s wait for the seller: this row waits it');
        return wait.waitMs;
      });
      // the rule the row was sent under: above the marketplace's own, it is the operator's to lower
      const rule = { max: permit.limit, windowMs: permit.windowMs };
      log.warn({ sellerId, uploadId, row, retryAfterMs, waitMs: wait.waitMs, rule }, 'the marketplace answered throttled: the seller waits for its Retry-After (at most an hour), else one window');
      return delay(job, token, waitMs);
    }

    if (outcome.kind === 'unauthorized') {
      deps.onEvent?.('unauthorized', sellerId);
      await limiter.complete(ids, undefined, deps.uploadRetentionS);
      // a token fetched since this call left may be good: one fresh token, one resend with the same key.
      // The seller is paused when the token refused was itself fetched after a refusal and no call
      // has gone through with it (asked of Redis: another process may have had one through)
      if (deps.tokens && accessToken && !(accessToken.renewed && (await deps.tokens.unproven(sellerId, accessToken.token)))) {
        const t = await deps.tokens.renew(sellerId, accessToken.token);
        if ('rejected' in t) return pauseForCredentials(job, token, t.rejected, t.fp);
        if ('waitMs' in t) return delay(job, token, t.waitMs);
        log.info({ sellerId, uploadId, row }, 'the marketplace refused the token: the row is sent again with a fresh one');
        return delay(job, token, 1);
      }
      return pauseForCredentials(job, token, outcome.reason, sentFp);
    }

    // the marketplace took the token (it answered for the row itself): a refusal of it later is renewed
    if (accessToken?.renewed && (outcome.kind === 'registered' || outcome.kind === 'duplicate' || outcome.kind === 'invalid')) {
      deps.tokens?.proven(sellerId, accessToken.token);
    }

    if (outcome.kind === 'transient') {
      const attempt = job.attemptsMade + 1;
      // a job enqueued before its attempts were the pool's may carry fewer: BullMQ fails it after
      // its own count, so that attempt is judged here as the last
      const attempts = Math.min(deps.maxAttempts, job.opts.attempts ?? deps.maxAttempts);
      if (attempt < attempts) {
        await limiter.complete(ids, undefined, deps.uploadRetentionS);
        await noteFailing(job, permit.redisNow);
        log.warn({ sellerId, uploadId, row, attempt, maxAttempts: attempts, reason: outcome.reason }, 'registration attempt failed; retrying');
        throw new TransientFailure(outcome.reason);
      }
      // the last attempt: the row fails only if the API has answered other rows while this one was
      // failing (the verdict noteAnswer read; none when Redis could not be asked: it fails); else
      // this may be an outage the breaker has not seen yet (with MAX_ATTEMPTS=1, or in its first
      // calls), and an outage fails no row: held, no attempt used
      let verdict = !outcome.answered && deps.pauses ? noted?.verdict ?? 'answered' : 'answered';
      // failing again with nothing to judge it by: a registered row sent again tells (replay-check.ts)
      const replay = verdict !== 'answered' && job.data.failingSince !== undefined
        ? await replayRegistered(replays, job).catch((): Replay => 'unanswered') : undefined;
      if (replay === 'answered') {
        verdict = 'answered';
        // an answer, as any other is: this process's count of calls without one starts again
        health.resetStreak();
      }
      if (verdict !== 'answered') {
        await limiter.complete(ids, undefined, deps.uploadRetentionS);
        await noteFailing(job, permit.redisNow);
        if (replay === 'another') {
          // another row's replay is out (two rows failing together): its answer judges this one
          // on its next call. Taken for an outage's row here, it opened the breaker, and with no
          // other row to answer a probe it was held for good
          log.warn({ sellerId, uploadId, row, reason: outcome.reason }, 'no usable answer, and a registered row sent again for another row is to tell: held until then, no attempt used');
          return hold(job, token, OUTAGE, true);
        }
        log.warn({ sellerId, uploadId, row, reason: outcome.reason }, 'no usable answer, and nothing tells this row from an outage: held as in one, no attempt used');
        // failing again with no other row answered since it left: the API counts as unavailable,
        // so that status, both console pages and the metric say why the row waits. The row goes
        // on as the pool's probe, and the first other row answered closes the breaker; its next
        // call is then judged with that answer, and fails.
        if (job.data.failingSince !== undefined && verdict === 'alone') await health.unavailable({ sellerId, uploadId, row, reason: outcome.reason });
        return hold(job, token, OUTAGE, true);
      }
      // failing no more (marked by this call, or by one before it): rows failing beside it are not unclear for it
      if (usable === false || job.data.failingSince !== undefined) await clearApiFailing(deps.redis, ns, member).catch(() => undefined);
      outcome = { kind: 'invalid', reason: `gave up after ${attempt} attempts: ${outcome.reason}` };
    }

    const result: ProcessResult =
      outcome.kind === 'registered' ? { outcome: 'registered', productId: outcome.productId }
      : outcome.kind === 'duplicate' ? { outcome: 'duplicate', ...(outcome.productId ? { productId: outcome.productId } : {}), reason: outcome.reason }
      : outcome.kind === 'fault' ? { outcome: 'failed', reason: outcome.reason }
      : { outcome: 'failed', reason: (outcome.field && !outcome.reason.startsWith(outcome.field) ? `${outcome.field}: ${outcome.reason}` : outcome.reason).slice(0, 500) };
    const final = { outcome: result.outcome, detail: { status: result.outcome, ...result }, wantNextPermit: log.isLevelEnabled('info') };
    // the count and its job's completion (issued later in this turn) leave in one write,
    // and behind them the permit for the row BullMQ fetches with that completion
    const queue = deps.permitAheadFor?.(job);
    const countAhead = typeof deps.countAhead === 'function' ? deps.countAhead(job) : deps.countAhead === true;
    if (countAhead) writeTogether(deps.redis, queue && limiter.permitNext && token && job.id ? (together, position) => permits.ask(queue, token, { jobId: job.id!, sellerId }, together, position) : undefined);
    const counting = limiter.complete(ids, final, deps.uploadRetentionS).then((counts) => {
      if (!counts.counted) return;
      deps.onEvent?.(result.outcome, sellerId);
      if (result.outcome === 'failed') log.warn({ sellerId, uploadId, row, reason: result.reason }, 'row failed');
      logRowCounted(log, sellerId, uploadId, counts, rate(permit.limit, permit.windowMs), counts.nextPermitInMs ?? 0, counts.pace,
        async () => (await deps.redis.hsetnx(uploadKeys(ns, sellerId, uploadId, home).upload, 'finishedLogged', 1)) === 1);
    });
    if (!countAhead) {
      await counting;
      return result;
    }
    const tracked = counting.catch((err: Error) => {
      log.error({ err, sellerId, uploadId, row, outcome: result.outcome }, 'could not count a finished row');
    }).finally(() => countsInFlight.delete(tracked));
    countsInFlight.add(tracked);
    return result;
  }

  /** Rows being processed now (their API calls and counts). */
  const inHand = new Set<Promise<unknown>>();
  const tracked = (...args: Parameters<typeof processRegistration>) => {
    const p = processRegistration(...args);
    inHand.add(p);
    p.then(() => inHand.delete(p), () => inHand.delete(p));
    return p;
  };
  return Object.assign(tracked, {
    fetching: (queue: QueueKeys, token: string) => {
      if (limiter.permitNext) writeTogether(deps.redis, (together, position) => permits.ask(queue, token, undefined, together, position));
    },
    settled: async () => {
      // a row finishing adds its count: wait until neither is left
      while (inHand.size > 0 || countsInFlight.size > 0) await Promise.allSettled([...inHand, ...countsInFlight]);
    },
  });
}

/** Exponential backoff with jitter: 1 s, 2 s, 4 s ... (capped at 30 s), each scaled by a random 0.5-1.0. */
export function backoffWithJitter(attemptsMade: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 1000 * 2 ** Math.max(0, attemptsMade - 1));
  return Math.round(base * (0.5 + random() * 0.5));
}
