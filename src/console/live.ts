/**
 * One reader of Redis per console process, feeding every open page.
 *
 * While at least one client listens, the reader takes one snapshot per tick
 * (`read`), whatever the number of clients; each client then gets its own view
 * of that snapshot (its scope: one seller, or everything), sent when the view
 * changed or when `heartbeatMs` passed since its last event. So 100 open pages
 * cost Redis what one does. With no listener, nothing is read.
 *
 * A read that fails, or has not answered after `stallMs`, stalls the feed: every
 * tick then tells each client it has no fresh snapshot (`onStalled`), instead of
 * saying nothing, until a read answers again.
 */
export interface LiveOptions<S> {
  read: () => Promise<S>;
  /** ms between snapshots while anyone listens */
  intervalMs: number;
  /** ms a read may take before the feed counts as stalled; STALL_MS unless given */
  stallMs?: number;
  onError?: (err: unknown) => void;
  /** the host's clock (ms); Date.now unless given */
  now?: () => number;
}

/**
 * How long a snapshot may take before clients hear that Redis does not answer:
 * past the 2 s between events console.md promises, well short of the 10 s a
 * request waits for an answer.
 */
export const STALL_MS = 3000;

type Listener<S> = (snapshot: S) => void;
/** @param sinceMs when the feed last had a fresh snapshot, or began to wait for one (host clock, ms) */
type StallListener = (sinceMs: number) => void;

export class LiveFeed<S> {
  private readonly listeners = new Map<Listener<S>, StallListener | undefined>();
  private timer: NodeJS.Timeout | undefined;
  private latest: S | undefined;
  /** When the read under way began (host clock), or undefined when none is. */
  private readingSince: number | undefined;
  /** When the feed stalled (a read failed or took stallMs), or undefined while it answers. */
  private stalledSince: number | undefined;
  private readonly now: () => number;
  /** Snapshots taken so far (for tests and the bench). */
  reads = 0;

  constructor(private readonly opts: LiveOptions<S>) {
    this.now = opts.now ?? Date.now;
  }

  get listening(): number {
    return this.listeners.size;
  }

  /**
   * Calls `listener` with every snapshot (the latest one at once, if any), and
   * `onStalled` on every tick while the feed is stalled (at once, if it is).
   * @returns unsubscribe
   */
  subscribe(listener: Listener<S>, onStalled?: StallListener): () => void {
    this.listeners.set(listener, onStalled);
    // a client that joins during an outage hears of it, not of the last numbers read before it
    if (this.stalledSince !== undefined) onStalled?.(this.stalledSince);
    else if (this.latest !== undefined) listener(this.latest);
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.opts.intervalMs);
      void this.tick();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
        this.latest = undefined;
        this.stalledSince = undefined;
      }
    };
  }

  private async tick(): Promise<void> {
    if (this.readingSince !== undefined) {
      // a slow Redis: skip a tick rather than pile reads up (a read waiting for a Redis that
      // is away sits in the connection's queue until it is back), but say that nothing is fresh
      if (this.now() - this.readingSince >= (this.opts.stallMs ?? STALL_MS)) this.stall(this.readingSince);
      return;
    }
    const started = this.now();
    this.readingSince = started;
    try {
      const snapshot = await this.opts.read();
      this.reads++;
      this.stalledSince = undefined;
      if (this.listeners.size === 0) return;
      this.latest = snapshot;
      this.each((listener) => listener(snapshot));
    } catch (err) {
      this.opts.onError?.(err);
      this.stall(started);
    } finally {
      this.readingSince = undefined;
    }
  }

  private stall(since: number): void {
    this.stalledSince ??= since;
    const stalledSince = this.stalledSince;
    this.each((_, onStalled) => onStalled?.(stalledSince));
  }

  /** `call` for each client; one that throws is reported and does not stop the rest. */
  private each(call: (listener: Listener<S>, onStalled: StallListener | undefined) => void): void {
    for (const [listener, onStalled] of [...this.listeners]) {
      try {
        call(listener, onStalled);
      } catch (err) {
        this.opts.onError?.(err);
      }
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.listeners.clear();
  }
}

/**
 * One client's stream of views: `send` is called with the view's text when it
 * differs from the last one sent, or when `heartbeatMs` passed since then.
 */
export function viewSender<S>(view: (s: S) => string, send: (text: string) => void, heartbeatMs: number, now: () => number): Listener<S> {
  let last: string | undefined;
  let lastAt = 0;
  return (snapshot) => {
    const text = view(snapshot);
    const t = now();
    if (text === last && t - lastAt < heartbeatMs) return;
    last = text;
    lastAt = t;
    send(text);
  };
}
