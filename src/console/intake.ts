/**
 * The console's intake line: sheets posted to `POST /api/uploads` are read
 * (parsed and checked) and enqueued a few at a time, first come first served;
 * the rest wait their turn with their bytes in hand.
 *
 * Reading a sheet is CPU work in the console's own process (about 75 ms for
 * 500 rows on the bench host). Without the line, 300 sellers posting 500-row
 * sheets at once had 300 parses interleaved on the event loop: each finished
 * only near the end of all of them, then all 300 enqueues went to Redis at
 * once, 150,000 jobs behind one connection, and every upload ran past the
 * 10 s REDIS_WAIT_MS. Every seller was told Redis had not answered, though it
 * had (scripts/console-upload-load.mjs: 300 of 300 answered 503 after 23-25 s,
 * the console at 859 MB RSS). In the line, each upload's enqueue meets only
 * the few beside it, the first sellers are answered at once, and the console
 * holds a few parsed sheets instead of hundreds.
 */

/** What `run` gives when the line is full: nothing was run. */
export const LINE_FULL = Symbol('line full');

export interface IntakeBounds {
  /** uploads read and enqueued at once */
  size: number;
  /** uploads that may wait their turn */
  maxWaiting: number;
  /** their files' bytes, together */
  maxWaitingBytes: number;
}

export class IntakeLine {
  private running = 0;
  private waitingBytes = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly bounds: IntakeBounds) {}

  /** Uploads waiting their turn now. */
  get length(): number {
    return this.waiting.length;
  }

  /** Runs `work` in its turn (an upload of `bytes`), or gives LINE_FULL at once when the line holds as many as it may. */
  async run<T>(bytes: number, work: () => Promise<T>): Promise<T | typeof LINE_FULL> {
    const { size, maxWaiting, maxWaitingBytes } = this.bounds;
    if (this.running < size) this.running++;
    else {
      if (this.waiting.length >= maxWaiting || this.waitingBytes + bytes > maxWaitingBytes) return LINE_FULL;
      this.waitingBytes += bytes;
      // the turn is handed over by the upload before it (the running count stays)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      this.waitingBytes -= bytes;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
