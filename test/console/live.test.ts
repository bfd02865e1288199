/** The SSE fan-out: one reader for any number of clients, each client its own scope. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LiveFeed, viewSender } from '../../src/console/live.js';
import type { ConsoleSnapshot } from '../../src/console/snapshot.js';
import { viewOf } from '../../src/console/views.js';
import type { SellerStatus, UploadStatus } from '../../src/progress/status.js';

afterEach(() => { vi.useRealTimers(); });

const upload = (sellerId: string, uploadId: string, registered: number, total = 10): UploadStatus => ({
  uploadId, sellerId, file: `${sellerId}.xlsx`, createdAt: 1, total, registered, duplicate: 0, failed: 0, cancelled: 0, cancelledAt: undefined,
  pending: total - registered, lost: 0, invalid: 0, done: registered >= total,
});
const seller = (sellerId: string, nextPermitInMs = 0): SellerStatus => ({
  sellerId, nextPermitInMs, limit: 10, windowMs: 2000, waitingForPermit: 0, inProgress: 0, etaMs: 0, pace: 'rule', recentSends: 3, paused: null, ruleSource: 'config',
});
const snapshot = (registered: number): ConsoleSnapshot => ({
  report: { uploads: [upload('A', 'a1', registered), upload('B', 'b1', 10)], sellers: [seller('A', 500), seller('B')], pool: { up: 2, expected: 2 } },
  failures: new Map([['b1', [{ reason: 'price: too high', count: 2 }]]]),
  at: 0,
});

describe('LiveFeed', () => {
  it('reads once per tick whatever the number of clients, and not at all with none', async () => {
    vi.useFakeTimers();
    let registered = 0;
    const read = vi.fn(async () => snapshot(registered));
    const feed = new LiveFeed({ read, intervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(read).not.toHaveBeenCalled();

    const got = Array.from({ length: 100 }, () => [] as ConsoleSnapshot[]);
    const unsubscribe = got.map((list) => feed.subscribe((s) => list.push(s)));
    await vi.advanceTimersByTimeAsync(0);
    expect(read).toHaveBeenCalledTimes(1);
    registered = 4;
    await vi.advanceTimersByTimeAsync(3000);
    expect(read).toHaveBeenCalledTimes(4);
    for (const list of got) expect(list.map((s) => s.report.uploads[0]!.registered)).toEqual([0, 4, 4, 4]);

    for (const u of unsubscribe) u();
    await vi.advanceTimersByTimeAsync(5000);
    expect(read).toHaveBeenCalledTimes(4);
    feed.close();
  });

  it('a client that joins gets the latest snapshot at once', async () => {
    vi.useFakeTimers();
    const feed = new LiveFeed({ read: async () => snapshot(2), intervalMs: 1000 });
    feed.subscribe(() => undefined);
    await vi.advanceTimersByTimeAsync(0);
    const late: ConsoleSnapshot[] = [];
    feed.subscribe((s) => late.push(s));
    expect(late).toHaveLength(1);
    feed.close();
  });
});

describe('LiveFeed while Redis does not answer', () => {
  it('tells every client on each tick once a read has taken stallMs, and sends snapshots again once one answers', async () => {
    vi.useFakeTimers();
    let answer: (s: ConsoleSnapshot) => void = () => undefined;
    let hang = false;
    const read = vi.fn(() => (hang ? new Promise<ConsoleSnapshot>((resolve) => { answer = resolve; }) : Promise.resolve(snapshot(1))));
    const feed = new LiveFeed({ read, intervalMs: 1000, stallMs: 3000 });
    const got: number[] = [];
    const stalls: number[] = [];
    feed.subscribe((s) => got.push(s.report.uploads[0]!.registered), (since) => stalls.push(since));
    await vi.advanceTimersByTimeAsync(0);
    expect(got).toEqual([1]);

    hang = true;
    const hungAt = Date.now() + 1000;
    await vi.advanceTimersByTimeAsync(3000); // the read began at the next tick: not stalled yet
    expect(stalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(3000);
    expect(stalls.length).toBeGreaterThanOrEqual(2); // on every tick, not once
    expect(new Set(stalls)).toEqual(new Set([hungAt]));
    expect(read).toHaveBeenCalledTimes(2); // no reads piled up behind the one waiting

    // a client that joins now hears of the outage, not the numbers from before it
    const late: string[] = [];
    feed.subscribe(() => late.push('snapshot'), () => late.push('stalled'));
    expect(late).toEqual(['stalled']);

    hang = false;
    answer(snapshot(5));
    await vi.advanceTimersByTimeAsync(0);
    expect(got).toEqual([1, 5]);
    const before = stalls.length;
    await vi.advanceTimersByTimeAsync(2000);
    expect(stalls.length).toBe(before);
    expect(got).toEqual([1, 5, 1, 1]);
    feed.close();
  });

  it('counts a failed read as stalled at once, and reports the error', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let fail = true;
    const feed = new LiveFeed({ read: async () => { if (fail) throw new Error('Connection is closed.'); return snapshot(2); }, intervalMs: 1000, onError: (e) => errors.push(e) });
    const stalls: number[] = [];
    const got: ConsoleSnapshot[] = [];
    feed.subscribe((s) => got.push(s), (since) => stalls.push(since));
    await vi.advanceTimersByTimeAsync(0);
    expect(stalls).toHaveLength(1);
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(stalls).toHaveLength(2);
    fail = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(got).toHaveLength(1);
    expect(stalls).toHaveLength(2);
    feed.close();
  });
});

describe('viewSender', () => {
  it('sends on a change, and otherwise at least every heartbeat', () => {
    let now = 0;
    const sent: string[] = [];
    const listener = viewSender<number>((n) => `v${n}`, (text) => sent.push(text), 1500, () => now);
    listener(1);
    now = 1000; listener(1); // same view, too soon
    now = 1500; listener(1); // heartbeat
    now = 1600; listener(2); // a change goes at once
    now = 2600; listener(2);
    expect(sent).toEqual(['v1', 'v1', 'v2']);
  });
});

describe('viewOf', () => {
  it("gives a seller only its own uploads, sellers and failures; an operator everything and the pool", () => {
    const s = snapshot(3);
    const a = viewOf(s, { kind: 'seller', sellerId: 'A' });
    expect(a.uploads.map((u) => u.uploadId)).toEqual(['a1']);
    expect(a.sellers.map((x) => x.sellerId)).toEqual(['A']);
    expect(a.failures).toEqual([]);
    expect(a).not.toHaveProperty('pool');
    expect(JSON.stringify(a)).not.toContain('"B"');

    const ops = viewOf(s, { kind: 'operator' });
    expect(ops.uploads.map((u) => u.uploadId)).toEqual(['a1', 'b1']); // unfinished first
    expect(ops.pool).toEqual({ up: 2, expected: 2 });
    expect(ops.failures).toEqual([{ reason: 'price: too high', count: 2, sellers: 1 }]);
    expect(ops.uploads.map((u) => u.state)).toEqual(['throttled', 'done']);
    expect(viewOf(s, { kind: 'operator', sellerId: 'B' }).uploads.map((u) => u.uploadId)).toEqual(['b1']);
  });

  it('names to each scope only its own uploads\' rows failing while the API is unavailable', () => {
    const s = snapshot(3);
    const down = { ...s, report: { ...s.report, api: { available: false, since: 1, failing: [{ uploadId: 'b1', row: 4 }, { uploadId: 'a1', row: 7 }] } } };
    expect(viewOf(down, { kind: 'seller', sellerId: 'A' }).api).toEqual({ available: false, since: 1, failing: [{ uploadId: 'a1', row: 7 }] });
    expect(JSON.stringify(viewOf(down, { kind: 'seller', sellerId: 'A' }))).not.toContain('b1');
    expect(viewOf(down, { kind: 'operator' }).api.failing).toEqual([{ uploadId: 'b1', row: 4 }, { uploadId: 'a1', row: 7 }]);
    expect(viewOf(down, { kind: 'operator', sellerId: 'B' }).api.failing).toEqual([{ uploadId: 'b1', row: 4 }]);
  });

  it('tells both scopes whether a worker pool runs, and only the operator its figures', () => {
    expect(viewOf(snapshot(3), { kind: 'seller', sellerId: 'A' }).poolRunning).toBe(true);
    const s = snapshot(3);
    const idle = { ...s, report: { ...s.report, pool: { up: 0, expected: 0 } } };
    expect(viewOf(idle, { kind: 'seller', sellerId: 'A' }).poolRunning).toBe(false);
    expect(viewOf(idle, { kind: 'operator' })).toMatchObject({ poolRunning: false, pool: { up: 0, expected: 0 } });
  });
});
