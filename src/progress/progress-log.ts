/**
 * The operator's view in the logs: `"upload progress"` lines per seller and
 * upload at every 10 % and when the seller is throttled or released, and one
 * `"upload finished"` line per upload with the final counts.
 */
import type { Logger } from '../logger.js';
import type { SellerPace, UploadCounts } from '../rate-limit/limiter.js';
import { crossesDecile, formatDuration, paceOf } from './eta.js';

export interface Rate {
  limit: number;
  windowMs: number;
  guardMs: number;
}

const finishedOf = (c: UploadCounts) => c.registered + c.duplicate + c.failed + (c.cancelled ?? 0);

function fields(sellerId: string, uploadId: string, c: UploadCounts, rate: Rate, nextPermitInMs = 0, seller?: SellerPace) {
  const done = finishedOf(c);
  // without the seller's recent sends (a throttle event) the rule is what holds it
  const { etaMs: eta, pace } = paceOf({
    pending: c.total - done, limit: rate.limit, spanMs: rate.windowMs + rate.guardMs, nextPermitInMs,
    plannedAhead: seller?.plannedAhead ?? 0, recentSends: seller?.recentSends ?? rate.limit, recentSpanMs: seller?.recentSpanMs ?? 0,
  });
  return {
    sellerId,
    uploadId,
    registered: c.registered,
    duplicate: c.duplicate,
    failed: c.failed,
    ...(c.cancelled ? { cancelled: c.cancelled } : {}),
    pending: Math.max(0, c.total - done),
    total: c.total,
    percent: c.total > 0 ? Math.floor((done * 100) / c.total) : 100,
    etaMs: eta,
    eta: formatDuration(eta),
    pace,
    rate: `${rate.limit}/${rate.windowMs}ms`,
  };
}

/**
 * After a row was counted: a progress line at each 10 % step (its ETA, and
 * `pace`: whether the seller's rule or the pool sets it), a finished line at the end.
 * `claimFinished` says whether this process writes the finished line: true once per
 * upload across the pool (the upload's `finishedLogged`, which the supervisor's line
 * for a cancelled upload claims too, steering/cancel.ts).
 */
export function logRowCounted(
  log: Logger, sellerId: string, uploadId: string, c: UploadCounts, rate: Rate, nextPermitInMs = 0, seller?: SellerPace,
  claimFinished: () => Promise<boolean> = async () => true,
): void {
  if (!log.isLevelEnabled('info')) return;
  const done = finishedOf(c);
  if (crossesDecile(done, c.total)) log.info(fields(sellerId, uploadId, c, rate, nextPermitInMs, seller), 'upload progress');
  // a cancelled upload's finished line comes from the pool's supervisor (steering/cancel.ts), once
  if (done === c.total && !c.cancelled) {
    void claimFinished().then((mine) => {
      if (!mine) return;
      log.info(
        { sellerId, uploadId, total: c.total, registered: c.registered, duplicate: c.duplicate, failed: c.failed, cancelled: c.cancelled ?? 0 },
        'upload finished',
      );
    }, () => undefined);
  }
}

/** The seller became throttled (its next permit is later) or was released. */
export function logThrottleEvent(
  log: Logger, event: 'throttled' | 'released', sellerId: string, uploadId: string, c: UploadCounts, rate: Rate, waitMs: number,
): void {
  if (!log.isLevelEnabled('info')) return;
  log.info({ ...fields(sellerId, uploadId, c, rate, waitMs), event, nextPermitInMs: waitMs }, 'upload progress');
}
