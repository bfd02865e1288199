import { describe, expect, it } from 'vitest';
import { MAX_PRIORITY, SMALL_UPLOAD, firstPriority, rowPriority } from '../../src/upload/fair-share.js';
import { PRIORITY } from '../../src/queue.js';

describe('fair-share priorities', () => {
  it('starts an idle queue at NEW_ROW, behind rows that hold a slot', () => {
    expect(firstPriority(undefined, undefined)).toBe(PRIORITY.NEW_ROW);
    expect(PRIORITY.DUE_ROW).toBeLessThan(PRIORITY.NEW_ROW);
  });

  it('puts a new seller in the current round, not behind the backlog', () => {
    // 200 sellers queued up to priority 52, the round now at 12
    expect(firstPriority(12, undefined)).toBe(12);
  });

  it('continues a seller with rows still waiting after its own last row', () => {
    expect(firstPriority(12, 40)).toBe(41);
    expect(firstPriority(12, 12)).toBe(13);
  });

  it('starts a seller whose rows are all served in the current round', () => {
    expect(firstPriority(30, 11)).toBe(30);
  });

  it('never goes past BullMQ\'s largest priority', () => {
    expect(firstPriority(MAX_PRIORITY, MAX_PRIORITY)).toBe(MAX_PRIORITY);
    expect(rowPriority(MAX_PRIORITY - 2, 5, 100)).toBe(MAX_PRIORITY);
  });

  it('spreads a big upload one row per round, and keeps a small one whole in its first round', () => {
    expect([0, 1, 2].map((i) => rowPriority(7, i, 50))).toEqual([7, 8, 9]);
    expect(Array.from({ length: SMALL_UPLOAD }, (_, i) => rowPriority(7, i, SMALL_UPLOAD))).toEqual(Array(SMALL_UPLOAD).fill(7));
    expect(rowPriority(7, SMALL_UPLOAD, SMALL_UPLOAD + 1)).toBe(7 + SMALL_UPLOAD);
  });
});
