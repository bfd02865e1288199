/**
 * Delayed rows wake on time, whatever Redis's `hz`.
 *
 * An idle BullMQ worker waits for the next delayed job with BZPOPMIN and a
 * timeout. Redis answers an expired timeout only on its next event-loop turn,
 * which on an idle server comes with its cron tick: every 1/hz s, 100 ms at the
 * default hz 10. A throttled seller's rows would then wake up to 100 ms after
 * their slot, and every window would start that much late. Any command makes
 * the loop turn, so the process that delays a row also sends a cheap command
 * (a read, to the queue's node) for the moment the row is due. Wake times are
 * merged into 5 ms steps: one command per step, not one per row.
 */
export interface WakeKicker {
  /** Make sure Redis's loop turns at `atMs` (this host's clock). */
  wakeAt(atMs: number): void;
  /** Cancels what is still pending (on shutdown). */
  stop(): void;
}

const STEP_MS = 5;

export function createWakeKicker(kick: () => Promise<unknown>, now: () => number = Date.now): WakeKicker {
  const pending = new Map<number, NodeJS.Timeout>();
  return {
    wakeAt(atMs) {
      const step = Math.ceil(atMs / STEP_MS) * STEP_MS;
      if (pending.has(step)) return;
      const timer = setTimeout(() => {
        pending.delete(step);
        kick().catch(() => undefined);
      }, Math.max(0, step - now() + 1));
      timer.unref();
      pending.set(step, timer);
    },
    stop() {
      for (const timer of pending.values()) clearTimeout(timer);
      pending.clear();
    },
  };
}
