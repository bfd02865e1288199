/**
 * What the console shows, read from Redis in one pass: every upload's counters,
 * each seller's limiter state, the pools' processes, and the failed rows'
 * reasons. The costly parts are cached between passes: an upload's failure
 * reasons are re-read only when its failed count changes, and its lost rows
 * (which reads its rows) at most every LOST_CHECK_MS.
 */
import type { Config } from '../config.js';
import { namespaceOf } from '../keys.js';
import { readStatus, type StatusFilter, type StatusReport } from '../progress/status.js';
import type { RedisClient } from '../redis.js';
import { uploadKeysOf } from '../seller-home.js';

export const LOST_CHECK_MS = 15_000;

export interface FailureGroup {
  reason: string;
  count: number;
}

export interface ConsoleSnapshot {
  report: StatusReport;
  /** Failed rows by upload id, grouped by reason. */
  failures: Map<string, FailureGroup[]>;
  /** The console's clock when read (ms). */
  at: number;
}

export class SnapshotReader {
  private lostKnown = new Map<string, number>();
  private lostCheckedAt = 0;
  private readonly failureCache = new Map<string, { failed: number; groups: FailureGroup[] }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly config: Config,
    private readonly now: () => number = Date.now,
  ) {}

  async read(filter: StatusFilter = {}): Promise<ConsoleSnapshot> {
    const at = this.now();
    const whole = !filter.sellerId && !filter.uploadId;
    if (whole && at - this.lostCheckedAt >= LOST_CHECK_MS) {
      this.lostKnown = new Map();
      this.lostCheckedAt = at;
    }
    // a scoped read (one request) checks its own uploads afresh and leaves the shared cache alone
    const report = await readStatus(this.redis, this.config, filter, whole ? { lostKnown: this.lostKnown } : {});
    const ns = namespaceOf(this.config.queuePrefix);
    const failures = new Map<string, FailureGroup[]>();
    for (const u of report.uploads) {
      if (u.failed === 0) continue;
      let cached = this.failureCache.get(u.uploadId);
      if (!cached || cached.failed !== u.failed) {
        cached = { failed: u.failed, groups: await this.failureGroups(ns, u.sellerId, u.uploadId) };
        this.failureCache.set(u.uploadId, cached);
      }
      failures.set(u.uploadId, cached.groups);
    }
    if (whole) for (const id of this.failureCache.keys()) if (!failures.has(id)) this.failureCache.delete(id);
    return { report, failures, at };
  }

  private async failureGroups(ns: string, sellerId: string, uploadId: string): Promise<FailureGroup[]> {
    const outcomes = await this.redis.hvals((await uploadKeysOf(this.redis, ns, sellerId, uploadId)).rows);
    const counts = new Map<string, number>();
    for (const text of outcomes) {
      try {
        const o = JSON.parse(text) as { status?: string; reason?: string };
        if (o.status === 'failed') counts.set(o.reason ?? 'no reason given', (counts.get(o.reason ?? 'no reason given') ?? 0) + 1);
      } catch {
        // not an outcome this version wrote
      }
    }
    return [...counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count);
  }
}
