/**
 * How many jobs a worker process runs at once when WORKER_CONCURRENCY is `auto`:
 * enough requests in flight that the API's answer time, not the pool, bounds
 * the rate, and no more.
 *
 * A process's slot is busy for one answer time per row. Measured on the 2-core
 * bench machine (README, "Sizing the pool"), 16 processes run out of CPU near
 * 500-600 rows/s, about one row per 25 ms per process; so a process wants one
 * slot per 25 ms of answer time, between 1 and AUTO_MAX. At 2-25 ms answers
 * that is 1 slot (more only adds in-process queueing, which delays sends the
 * limiter has planned); at 200 ms, 8. AUTO_MAX is the concurrency past which
 * the bench measured no more rows/s, only more memory and latency.
 */
export const AUTO_MAX = 8;
/** Answer time per slot (ms): the CPU time per row of one process of a 16-process pool on 2 cores. */
export const MS_PER_SLOT = 25;

/** Slots for an answer time (ms); pure. */
export function concurrencyFor(answerMs: number, max = AUTO_MAX): number {
  return Math.max(1, Math.min(max, Math.floor(answerMs / MS_PER_SLOT)));
}

/** A moving average of answer times (ms): each sample moves it a fifth of the way, the first sets it. */
export class AnswerTime {
  private avg: number | undefined;
  observe(ms: number): number {
    this.avg = this.avg === undefined ? ms : this.avg * 0.8 + ms * 0.2;
    return this.avg;
  }
  get ms(): number | undefined {
    return this.avg;
  }
}
