import { describe, expect, it } from 'vitest';
import { MAX_PRIORITY, ROUND, SMALL_UPLOAD, firstPriority, rowPriority, type UploadStart } from '../../src/upload/fair-share.js';
import { PRIORITY } from '../../src/queue.js';

/** BullMQ's order: priority, then insertion. */
const served = <T extends { p: number }>(rows: T[]) => rows.map((r, n) => ({ ...r, n })).sort((a, b) => a.p - b.p || a.n - b.n);

describe('fair-share priorities', () => {
  it('starts an idle queue with a newcomer\'s first row at NEW_ROW, behind rows that hold a slot', () => {
    const at = firstPriority(undefined, undefined);
    expect(at.newcomer).toBe(true);
    expect(rowPriority(at, 0, 50)).toBe(PRIORITY.NEW_ROW);
    expect(PRIORITY.DUE_ROW).toBeLessThan(PRIORITY.NEW_ROW);
  });

  it('puts a newcomer\'s first row ahead of the round being served, the rest in the rounds after', () => {
    // 200 sellers queued up to priority 200, the round now at 40
    const at = firstPriority(40, undefined);
    expect(at).toEqual({ start: 40, newcomer: true });
    expect([0, 1, 2].map((i) => rowPriority(at, i, 50))).toEqual([38, 44, 48]);
    // only small uploads' later rows left in the round: still that round
    expect(firstPriority(41, undefined).start).toBe(40);
    // only newcomers' rows left ahead of it: still that round
    expect(firstPriority(38, undefined).start).toBe(40);
  });

  it('continues a seller with rows still waiting in the round after its own last row, as no newcomer', () => {
    expect(firstPriority(12, 40)).toEqual({ start: 44, newcomer: false });
    expect(firstPriority(12, 12)).toEqual({ start: 16, newcomer: false });
    // its last upload was small: its later rows are right behind that round's
    expect(firstPriority(12, 13)).toEqual({ start: 16, newcomer: false });
  });

  it('starts a seller whose rows are all served in the current round, as a newcomer', () => {
    expect(firstPriority(32, 11)).toEqual({ start: 32, newcomer: true });
  });

  it('never goes past BullMQ\'s largest priority', () => {
    const at = firstPriority(MAX_PRIORITY, MAX_PRIORITY);
    expect(at.start).toBeLessThanOrEqual(MAX_PRIORITY);
    expect(rowPriority({ start: MAX_PRIORITY - 3, newcomer: false }, 5, 100)).toBe(MAX_PRIORITY);
  });

  it('spreads a big upload one row per round, and keeps a small one whole in its first round', () => {
    const going: UploadStart = { start: 8, newcomer: false };
    expect([0, 1, 2].map((i) => rowPriority(going, i, 50))).toEqual([8, 8 + ROUND, 8 + 2 * ROUND]);
    // a small upload: its first row with the round's first rows, the rest right behind them
    expect(Array.from({ length: SMALL_UPLOAD }, (_, i) => rowPriority(going, i, SMALL_UPLOAD))).toEqual([8, ...Array(SMALL_UPLOAD - 1).fill(9)]);
    // a newcomer's small upload: whole, ahead of the round
    expect(Array.from({ length: 7 }, (_, i) => rowPriority({ start: 8, newcomer: true }, i, 7))).toEqual([6, 7, 7, 7, 7, 7, 7]);
    expect(rowPriority(going, SMALL_UPLOAD, SMALL_UPLOAD + 1)).toBe(8 + ROUND * SMALL_UPLOAD);
  });

  it('serves a small seller arriving at a busy queue before the round, and its next upload in the round after', () => {
    // 20 sellers x 30 rows waiting from round 40 on; a 7-row newcomer arrives
    const busy = Array.from({ length: 20 }, (_, s) => Array.from({ length: 30 }, (_, i) => ({ s: `B${s}`, p: rowPriority({ start: 40, newcomer: false }, i, 30) }))).flat();
    const small = Array.from({ length: 7 }, (_, i) => ({ s: 'S', p: rowPriority(firstPriority(40, undefined), i, 7) }));
    const order = served([...busy, ...small]);
    expect(order.slice(0, 7).every((r) => r.s === 'S')).toBe(true);
  });

  it('serves every seller\'s first row before any seller\'s second, however many small uploads arrive at once', () => {
    // 1000 sellers x 5 rows, all while the queue is idle: each starts in the first round, as a newcomer
    const rows = Array.from({ length: 1000 }, (_, s) => Array.from({ length: 5 }, (_, i) => ({ s, i, p: rowPriority(firstPriority(undefined, undefined), i, 5) }))).flat();
    expect(served(rows).slice(0, 1000).every((r) => r.i === 0)).toBe(true);
    // and 300 newcomers arriving while a round is served: their first rows before any one's second
    const late = Array.from({ length: 300 }, (_, s) => Array.from({ length: 3 }, (_, i) => ({ s, i, p: rowPriority(firstPriority(40, undefined), i, 3) }))).flat();
    expect(served(late).slice(0, 300).every((r) => r.i === 0)).toBe(true);
  });
});
