/**
 * The operator's view in the logs: `"upload progress"` lines per seller and
 * upload at every 10 % and when the seller is throttled or released, and one
 * `"upload finished"` line per upload with the final counts.
 */
import type { Logger } from '../logger.js';
import type { UploadCounts } from '../rate-limit/limiter.js';
import { crossesDecile, etaMs, formatDuration } from './eta.js';

export interface Rate {
  limit: number;
  windowMs: number;
  guardMs: number;
}

function fields(sellerId: string, uploadId: string, c: UploadCounts, rate: Rate, nextPermitInMs = 0) {
  const done = c.registered + c.duplicate + c.failed;
  const eta = etaMs(c.total - done, rate.limit, rate.windowMs + rate.guardMs, nextPermitInMs);
  return {
    sellerId,
    uploadId,
    registered: c.registered,
    duplicate: c.duplicate,
    failed: c.failed,
    pending: Math.max(0, c.total - done),
    total: c.total,
    percent: c.total > 0 ? Math.floor((done * 100) / c.total) : 100,
    etaMs: eta,
    eta: formatDuration(eta),
    rate: `${rate.limit}/${rate.windowMs}ms`,
  };
}

/**
 * After a row was counted: a progress line at each 10 % step (its ETA from the
 * seller's rule and its next permit), a finished line at the end.
 */
export function logRowCounted(log: Logger, sellerId: string, uploadId: string, c: UploadCounts, rate: Rate, nextPermitInMs = 0): void {
  if (!log.isLevelEnabled('info')) return;
  const done = c.registered + c.duplicate + c.failed;
  if (crossesDecile(done, c.total)) log.info(fields(sellerId, uploadId, c, rate, nextPermitInMs), 'upload progress');
  if (done === c.total) {
    log.info(
      { sellerId, uploadId, total: c.total, registered: c.registered, duplicate: c.duplicate, failed: c.failed },
      'upload finished',
    );
  }
}

/** The seller became throttled (its next permit is later) or was released. */
export function logThrottleEvent(
  log: Logger, event: 'throttled' | 'released', sellerId: string, uploadId: string, c: UploadCounts, rate: Rate, waitMs: number,
): void {
  if (!log.isLevelEnabled('info')) return;
  log.info({ ...fields(sellerId, uploadId, c, rate, waitMs), event, nextPermitInMs: waitMs }, 'upload progress');
}
