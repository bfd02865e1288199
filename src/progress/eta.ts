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

/** Whether going from `done - 1` to `done` of `total` crosses a 10 % step (or finishes). */
export function crossesDecile(done: number, total: number): boolean {
  if (total <= 0 || done <= 0) return false;
  return Math.floor((done * 10) / total) > Math.floor(((done - 1) * 10) / total);
}
