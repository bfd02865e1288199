import { describe, expect, it } from 'vitest';
import { MAX_PRIORITY, SMALL_UPLOAD, firstPriority, rowPriority } from '../../src/upload/fair-share.js';
import { PRIORITY } from '../../src/queue.js';

describe('fair-share priorities', () => {
  it('starts an idle queue at NEW_ROW, behind rows that hold a slot', () => {
    expect(firstPriority(undefined, undefined)).toBe(PRIORITY.NEW_ROW);
    expect(PRIORITY.DUE_ROW).toBeLessThan(PRIORITY.NEW_ROW);
  });

  it('puts a new seller in the current round, not behind the backlog', () => {
    // 200 sellers queued up to priority 104, the round now at 12
    expect(firstPriority(12, undefined)).toBe(12);
    // only small uploads' later rows (odd) left in the round: a newcomer's first row goes before them
    expect(firstPriority(13, undefined)).toBe(12);
  });

  it('continues a seller with rows still waiting in the round after its own last row', () => {
    expect(firstPriority(12, 40)).toBe(42);
    expect(firstPriority(12, 12)).toBe(14);
    // its last upload was small: its later rows are in the odd half of that round
    expect(firstPriority(12, 13)).toBe(14);
  });

  it('starts a seller whose rows are all served in the current round', () => {
    expect(firstPriority(30, 11)).toBe(30);
  });

  it('never goes past BullMQ\'s largest priority', () => {
    expect(firstPriority(MAX_PRIORITY, MAX_PRIORITY)).toBeLessThanOrEqual(MAX_PRIORITY);
    expect(rowPriority(MAX_PRIORITY - 3, 5, 100)).toBe(MAX_PRIORITY);
  });

  it('spreads a big upload one row per round, and keeps a small one whole in its first round', () => {
    expect([0, 1, 2].map((i) => rowPriority(8, i, 50))).toEqual([8, 10, 12]);
    // a small upload: its first row with the round's first rows, the rest right behind them
    expect(Array.from({ length: SMALL_UPLOAD }, (_, i) => rowPriority(8, i, SMALL_UPLOAD))).toEqual([8, ...Array(SMALL_UPLOAD - 1).fill(9)]);
    expect(rowPriority(8, SMALL_UPLOAD, SMALL_UPLOAD + 1)).toBe(8 + 2 * SMALL_UPLOAD);
  });

  it('serves every seller\'s first row before any seller\'s second, however many small uploads arrive at once', () => {
    // 1000 sellers x 5 rows, all while the queue is idle: each starts in the first round
    const rows = Array.from({ length: 1000 }, (_, s) => Array.from({ length: 5 }, (_, i) => ({ s, i, p: rowPriority(firstPriority(undefined, undefined), i, 5) }))).flat();
    // BullMQ's order: priority, then insertion
    const served = [...rows].sort((a, b) => a.p - b.p);
    expect(served.slice(0, 1000).every((r) => r.i === 0)).toBe(true);
  });
});
