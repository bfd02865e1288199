/**
 * The API's own rate rule, pure: at most `limit` registrations per seller in
 * any trailing window of `windowMs`, timed at arrival.
 */
export class SlidingLog {
  private readonly times: number[] = [];
  private head = 0;
  maxInWindow = 0;

  /** Registrations in (now - windowMs, now]. */
  inWindow(now: number, windowMs: number): number {
    while (this.head < this.times.length && this.times[this.head]! <= now - windowMs) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times.splice(0, this.head);
      this.head = 0;
    }
    return this.times.length - this.head;
  }

  /** Admits at `now` if the rule allows; else returns the ms until it would. */
  tryAdmit(now: number, limit: number, windowMs: number): { admitted: true } | { admitted: false; retryAfterMs: number } {
    const n = this.inWindow(now, windowMs);
    if (n >= limit) {
      const oldestBlocking = this.times[this.times.length - limit]!;
      return { admitted: false, retryAfterMs: Math.max(1, oldestBlocking + windowMs - now) };
    }
    this.times.push(now);
    this.maxInWindow = Math.max(this.maxInWindow, n + 1);
    return { admitted: true };
  }
}
