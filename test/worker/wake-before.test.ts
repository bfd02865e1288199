import { describe, expect, it } from 'vitest';
import { WAKE_LEAD_MS, wakeBefore } from '../../src/worker/processor.js';
import type { Permit } from '../../src/rate-limit/limiter.js';

const denied = (waitMs: number, slotAfterMs: number, windowMs = 2000): Permit =>
  ({ granted: false, waitMs, limit: 50, windowMs, event: undefined, redisNow: 1_000_000, slot: 1_000_000 + slotAfterMs });

describe('a denied row asks again', () => {
  it('a little before its planned slot, so that its call leaves at the slot', () => {
    expect(wakeBefore(denied(2000, 2000))).toBe(2000 - WAKE_LEAD_MS);
  });

  it('at the time it was given for any other wait: a place freeing after the slot, or a wait or window too short to lead', () => {
    // the place it waits for frees 300 ms after its slot
    expect(wakeBefore(denied(2300, 2000))).toBe(2300);
    expect(wakeBefore(denied(4 * WAKE_LEAD_MS, 4 * WAKE_LEAD_MS))).toBe(4 * WAKE_LEAD_MS);
    // a window so short that the limiter would not grant it from that far ahead
    expect(wakeBefore(denied(1000, 1000, 300))).toBe(1000);
  });
});
