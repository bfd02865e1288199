/**
 * One reader of Redis per console process, feeding every open page.
 *
 * While at least one client listens, the reader takes one snapshot per tick
 * (`read`), whatever the number of clients; each client then gets its own view
 * of that snapshot (its scope: one seller, or everything), sent when the view
 * changed or when `heartbeatMs` passed since its last event. So 100 open pages
 * cost Redis what one does. With no listener, nothing is read.
 */
export interface LiveOptions<S> {
  read: () => Promise<S>;
  /** ms between snapshots while anyone listens */
  intervalMs: number;
  onError?: (err: unknown) => void;
}

type Listener<S> = (snapshot: S) => void;

export class LiveFeed<S> {
  private readonly listeners = new Set<Listener<S>>();
  private timer: NodeJS.Timeout | undefined;
  private latest: S | undefined;
  private reading = false;
  /** Snapshots taken so far (for tests and the bench). */
  reads = 0;

  constructor(private readonly opts: LiveOptions<S>) {}

  get listening(): number {
    return this.listeners.size;
  }

  /** Calls `listener` with every snapshot (the latest one at once, if any). @returns unsubscribe */
  subscribe(listener: Listener<S>): () => void {
    this.listeners.add(listener);
    if (this.latest !== undefined) listener(this.latest);
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
      }
    };
  }

  private async tick(): Promise<void> {
    if (this.reading) return; // a slow Redis: skip a tick rather than pile reads up
    this.reading = true;
    try {
      const snapshot = await this.opts.read();
      this.reads++;
      if (this.listeners.size === 0) return;
      this.latest = snapshot;
      for (const listener of [...this.listeners]) {
        try {
          listener(snapshot);
        } catch (err) {
          this.opts.onError?.(err);
        }
      }
    } catch (err) {
      this.opts.onError?.(err);
    } finally {
      this.reading = false;
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
