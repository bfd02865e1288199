/** ETA arithmetic, pure. All durations in ms. */

/**
 * Time until `remaining` rows are registered at `limit` per `spanMs` (window + guard),
 * when the next row can go in `nextPermitInMs`.
 */
export function etaMs(remaining: number, limit: number, spanMs: number, nextPermitInMs = 0): number {
  if (remaining <= 0) return 0;
  return nextPermitInMs + (Math.ceil(remaining / limit) - 1) * spanMs;
}

/** 242000 -> "4m 2s"; 900 -> "1s"; 0 -> "0s". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}

/**
 * A rule's window as an operator wrote it, short: 60000 -> "1m", 10000 -> "10s",
 * 1500 -> "1500ms" (the console's console.js says it the same way).
 */
export function formatWindow(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** Whether going from `done - 1` to `done` of `total` crosses a 10 % step (or finishes). */
export function crossesDecile(done: number, total: number): boolean {
  if (total <= 0 || done <= 0) return false;
  return Math.floor((done * 10) / total) > Math.floor(((done - 1) * 10) / total);
}

/** What sets a seller's pace: its own rule, or the pool (every worker busy with other rows). */
export type Pace = 'rule' | 'pool';

export interface PaceInput {
  /** Rows of the seller not finished yet. */
  pending: number;
  limit: number;
  /** Window + guard (ms). */
  spanMs: number;
  /** When the seller's next send may go (0: at once). */
  nextPermitInMs: number;
  /** Rows already holding a later slot. */
  plannedAhead: number;
  /** The seller's sends within the last span, and how long ago the oldest of them left (ms). */
  recentSends: number;
  recentSpanMs: number;
}

/**
 * A seller's rows waiting for a permit: those holding a later slot, and while the
 * producer defers rows of the seller (upload/deferral.ts, which hold no slot yet),
 * every unfinished row that is neither in flight nor able to go in the current
 * window. Pure.
 */
export function waitingForPermit(p: { pending: number; plannedAhead: number; deferredMs: number; inFlight: number; limit: number; recentSends: number }): number {
  if (p.deferredMs <= 0 || p.pending <= 0) return p.plannedAhead;
  const mayGoNow = Math.max(0, p.limit - p.recentSends);
  return Math.max(p.plannedAhead, p.pending - p.inFlight - mayGoNow);
}

/**
 * The seller's ETA and what sets it. The rule sets the pace when the seller is
 * throttled (a later permit, rows planned ahead) or already sends L per span.
 * Otherwise its rows wait for a worker, not for a permit: the pool sets the
 * pace, and the ETA comes from the rate the seller is actually served at over
 * its recent sends (never shorter than the rule's). Pure; all times in ms.
 */
export function paceOf(p: PaceInput): { etaMs: number; pace: Pace } {
  const byRule = etaMs(p.pending, p.limit, p.spanMs, p.nextPermitInMs);
  if (p.pending <= 0 || p.nextPermitInMs > 0 || p.plannedAhead > 0 || p.recentSends >= p.limit) return { etaMs: byRule, pace: 'rule' };
  // with fewer than 2 sends there is no rate yet: the rule's figure is a lower bound
  if (p.recentSends < 2) return { etaMs: byRule, pace: 'pool' };
  const perMs = p.recentSends / Math.max(p.recentSpanMs, 1000);
  return { etaMs: Math.max(byRule, Math.ceil(p.pending / perMs)), pace: 'pool' };
}
