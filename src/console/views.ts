/**
 * A snapshot seen through one scope: a seller sees its own uploads only; an
 * operator sees everything, plus the pool. Pure. The shape extends
 * `status --json` (cli.md) without renaming any field, so GET /api/uploads and
 * the SSE `status` event carry the same object.
 */
import { statusJson, uploadState } from '../progress/status.js';
import type { ConsoleSnapshot, FailureGroup } from './snapshot.js';

export type Scope = { kind: 'operator'; sellerId?: string | undefined } | { kind: 'seller'; sellerId: string };

export { uploadState, type UploadState } from '../progress/status.js';

function grouped(groups: Array<FailureGroup & { sellerId: string }>): Array<FailureGroup & { sellers: number }> {
  const byReason = new Map<string, { count: number; sellers: Set<string> }>();
  for (const g of groups) {
    const e = byReason.get(g.reason) ?? { count: 0, sellers: new Set<string>() };
    e.count += g.count;
    e.sellers.add(g.sellerId);
    byReason.set(g.reason, e);
  }
  return [...byReason].map(([reason, e]) => ({ reason, count: e.count, sellers: e.sellers.size })).sort((a, b) => b.count - a.count);
}

export function viewOf(snapshot: ConsoleSnapshot, scope: Scope) {
  const sellerId = scope.sellerId;
  const uploads = snapshot.report.uploads.filter((u) => !sellerId || u.sellerId === sellerId);
  const sellers = snapshot.report.sellers.filter((s) => !sellerId || s.sellerId === sellerId);
  const bySeller = new Map(sellers.map((s) => [s.sellerId, s]));
  const pool = snapshot.report.pool ?? { up: 0, expected: 0 };
  // the failing rows the whole snapshot holds, narrowed to the scope's uploads as everything else is
  const ids = new Set(uploads.map((u) => u.uploadId));
  const api = snapshot.report.api && { ...snapshot.report.api, ...(snapshot.report.api.failing ? { failing: snapshot.report.api.failing.filter((f) => ids.has(f.uploadId)) } : {}) };
  const json = statusJson({ uploads, sellers, ...(api ? { api } : {}) });
  const states = new Map(uploads.map((u) => [u.uploadId, uploadState(u, bySeller.get(u.sellerId))]));
  const createdAt = new Map(uploads.map((u) => [u.uploadId, u.createdAt]));
  const failures = grouped(uploads.flatMap((u) => (snapshot.failures.get(u.uploadId) ?? []).map((g) => ({ ...g, sellerId: u.sellerId }))));
  const active = (id: string) => states.get(id) !== 'done';
  return {
    // unfinished first, newest first
    uploads: json.uploads
      .map((u) => ({
        ...u,
        state: states.get(u.uploadId)!,
        createdAt: createdAt.get(u.uploadId)!,
        failures: snapshot.failures.get(u.uploadId) ?? [],
      }))
      .sort((a, b) => Number(active(b.uploadId)) - Number(active(a.uploadId)) || b.createdAt - a.createdAt),
    sellers: json.sellers.map((s) => {
      const pending = uploads.some((u) => u.sellerId === s.sellerId && !u.done);
      return { ...s, active: pending, throttled: pending && !s.paused && (s.nextPermitInMs > 0 || s.waitingForPermit > 0) };
    }),
    failures,
    api: json.api,
    ...(scope.kind === 'operator' ? { pool: { up: pool.up, expected: pool.expected } } : {}),
    // whether any worker pool runs (both scopes: a seller's unfinished upload then says why it does not move)
    poolRunning: pool.expected > 0,
  };
}

export type ConsoleView = ReturnType<typeof viewOf>;
