/**
 * `status`'s plain text and `--watch` lines say when no worker pool runs to send
 * the pending rows or the API is unavailable (and then make up no ETA), and when some
 * of its processes are down.
 */
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../src/cli/status.js';
import { RateMeter, watchLines } from '../../src/cli/status-watch.js';
import { statusJson, type SellerStatus, type StatusReport, type UploadStatus } from '../../src/progress/status.js';
import { bySellerId } from '../../src/keys.js';

const upload = (registered: number): UploadStatus => ({
  uploadId: 'u1', sellerId: 'S1', file: 'a.xlsx', createdAt: 0, total: 10, registered, duplicate: 0, failed: 0,
  cancelled: 0, cancelledAt: undefined, pending: 10 - registered, lost: 0, invalid: 0, done: registered === 10,
});
const seller: SellerStatus = {
  sellerId: 'S1', nextPermitInMs: 0, limit: 100, windowMs: 60_000, waitingForPermit: 0, inProgress: 2, etaMs: 1500, pace: 'pool', recentSends: 3, paused: null, ruleSource: 'config',
};
const report = (registered: number, pool?: { up: number; expected: number }): StatusReport => ({ uploads: [upload(registered)], sellers: [seller], ...(pool ? { pool } : {}) });

describe('status and the worker pool', () => {
  it('says no pool runs while rows are pending, and gives no ETA then', () => {
    const text = formatStatus(report(4, { up: 0, expected: 0 }));
    expect(text.split('\n')[0]).toBe('no worker pool is running: pending rows wait until `bulk-register workers` starts');
    expect(text).toMatch(/ETA unknown until a worker pool runs\)/);
    expect(text).not.toMatch(/ETA \d/);
    expect(watchLines(report(4, { up: 0, expected: 0 }), new RateMeter())[0]!.text).toMatch(/\| no worker pool is running$/);
  });

  it('says nothing of the pool when it runs whole, or when nothing is pending', () => {
    for (const r of [report(4, { up: 16, expected: 16 }), report(10, { up: 0, expected: 0 }), report(4)]) {
      const text = formatStatus(r);
      expect(text).not.toMatch(/worker pool/);
      expect(watchLines(r, new RateMeter())[0]!.text).not.toMatch(/worker pool/);
    }
    expect(formatStatus(report(4, { up: 16, expected: 16 }))).toMatch(/ETA 2s, paced by the pool/);
  });

  it('gives no ETA in the text and the live lines while the API is unavailable', () => {
    const down = { ...report(4, { up: 16, expected: 16 }), api: { available: false, since: 1 } };
    const text = formatStatus(down);
    expect(text.split('\n')[0]).toMatch(/^the registration API is unavailable since /);
    expect(text).toMatch(/ETA unknown while the API is unavailable\)/);
    expect(text).not.toMatch(/ETA \d/);
    expect(watchLines(down, new RateMeter())[0]!.text).toMatch(/\| held: the API is unavailable$/);
    // nothing pending: no seller waits on the API
    expect(formatStatus({ ...report(10, { up: 16, expected: 16 }), api: { available: false, since: 1 } })).not.toMatch(/ETA unknown/);
  });

  it('names the rows failing while the API is unavailable, by upload', () => {
    const base = report(4, { up: 16, expected: 16 });
    const one = formatStatus({ ...base, api: { available: false, since: 1, failing: [{ uploadId: 'u1', row: 9 }, { uploadId: 'u1', row: 4 }] } });
    expect(one.split('\n')[1]).toBe('  latest calls without an answer: upload u1 rows 9, 4');
    const two = formatStatus({ ...base, api: { available: false, since: 1, failing: [{ uploadId: 'u1', row: 9 }, { uploadId: 'u2', row: 3 }, { uploadId: 'u1', row: 4 }] } });
    expect(two).toMatch(/^ {2}latest calls without an answer: upload u1 rows 9, 4; upload u2 row 3$/m);
    expect(formatStatus({ ...base, api: { available: false, since: 1, failing: [] } })).not.toMatch(/without an answer/);
    // --watch: on the line of the upload they belong to
    const uploadId = base.uploads[0]!.uploadId;
    const watched = watchLines({ ...base, api: { available: false, since: 1, failing: [{ uploadId, row: 9 }, { uploadId: 'other', row: 3 }, { uploadId, row: 4 }] } }, new RateMeter());
    expect(watched[0]!.text).toMatch(/\| held: the API is unavailable \(no answer for rows 9, 4\)$/);
    expect(statusJson({ ...base, api: { available: false, since: 1, failing: [{ uploadId: 'u1', row: 9 }] } }).api).toEqual({ available: false, since: 1, failing: [{ uploadId: 'u1', row: 9 }] });
  });

  it('gives each seller its rows waiting for a permit and its calls in progress, as cli.md lists them', () => {
    expect(formatStatus(report(4, { up: 16, expected: 16 }))).toMatch(/, 0 waiting for a permit, 2 in progress, ETA/);
    expect(statusJson(report(4)).sellers[0]).toMatchObject({ waitingForPermit: 0, inProgress: 2 });
  });

  it('says how many processes are up when some are down', () => {
    expect(formatStatus(report(4, { up: 13, expected: 16 })).split('\n')[0]).toBe('worker pool: 13 of 16 processes up');
  });

  it('puts the pool in status --json beside the fields cli.md names', () => {
    expect(statusJson(report(4, { up: 3, expected: 4 })).pool).toEqual({ up: 3, expected: 4 });
    expect(statusJson(report(4))).not.toHaveProperty('pool');
  });

  it('gives status --json no ETA (null, not 0) while nothing sends the pending rows', () => {
    const etaOf = (r: StatusReport) => statusJson(r).sellers[0]!.etaMs;
    expect(etaOf(report(4, { up: 16, expected: 16 }))).toBe(1500);
    expect(etaOf(report(4, { up: 0, expected: 0 }))).toBeNull();
    const paused = { reason: 'stock check', by: 'operator' as const, since: 1 };
    expect(etaOf({ ...report(4, { up: 16, expected: 16 }), sellers: [{ ...seller, paused }] })).toBeNull();
    expect(etaOf({ ...report(4, { up: 16, expected: 16 }), api: { available: false, since: 1 } })).toBeNull();
    // nothing pending: the ETA stays what the rows say, whatever holds the seller
    expect(etaOf({ ...report(10, { up: 0, expected: 0 }), sellers: [{ ...seller, etaMs: 0, paused }] })).toBe(0);
  });

  it('lists sellers as a person reads them: S2 before S10', () => {
    expect(['S10', 'S2', 'T-1', 'S1', 's3', 'S100'].sort(bySellerId)).toEqual(['S1', 'S2', 's3', 'S10', 'S100', 'T-1']);
  });
});
