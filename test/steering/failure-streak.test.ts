import { describe, expect, it } from 'vitest';
import { FailureStreak, TRIP_AFTER, TRIP_WINDOW_MS } from '../../src/steering/outage.js';

describe('the outage breaker\'s streak', () => {
  it('trips after calls of TRIP_AFTER different rows in a row without a usable answer', () => {
    const s = new FailureStreak();
    const trips = Array.from({ length: TRIP_AFTER }, (_, i) => s.note(false, 1000 + i, `u:${i + 2}`));
    expect(trips).toEqual([...Array(TRIP_AFTER - 1).fill(false), true]);
  });

  it('is not tripped by one row failing again and again, nor reached across an answer or the window', () => {
    const s = new FailureStreak();
    for (let i = 0; i < 3 * TRIP_AFTER; i++) expect(s.note(false, 1000 + i, 'u:22')).toBe(false);
    const other = new FailureStreak();
    for (let i = 0; i < TRIP_AFTER - 1; i++) other.note(false, 1000, `u:${i}`);
    other.note(true, 1001, 'u:99');
    expect(other.note(false, 1002, 'u:50')).toBe(false);
    const slow = new FailureStreak();
    for (let i = 0; i < TRIP_AFTER - 1; i++) slow.note(false, 1000, `u:${i}`);
    expect(slow.note(false, 1000 + TRIP_WINDOW_MS + 1, 'u:50')).toBe(false);
  });
});
