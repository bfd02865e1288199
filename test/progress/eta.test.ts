import { describe, expect, it } from 'vitest';
import { crossesDecile, etaMs, formatDuration } from '../../src/progress/eta.js';
import { backoffWithJitter } from '../../src/worker/processor.js';

describe('eta', () => {
  it('is the rule optimum for the remaining rows', () => {
    expect(etaMs(500, 100, 60_500)).toBe(4 * 60_500);
    expect(etaMs(100, 100, 60_500, 2000)).toBe(2000);
    expect(etaMs(0, 100, 60_500, 2000)).toBe(0);
  });
  it('formats durations', () => {
    expect(formatDuration(242_000)).toBe('4m 2s');
    expect(formatDuration(900)).toBe('1s');
    expect(formatDuration(3_720_000)).toBe('1h 2m');
  });
  it('fires once per 10 % step', () => {
    const steps = Array.from({ length: 497 }, (_, i) => i + 1).filter((d) => crossesDecile(d, 497));
    expect(steps).toHaveLength(10);
    expect(steps.at(-1)).toBe(497);
    expect(Array.from({ length: 7 }, (_, i) => crossesDecile(i + 1, 7)).every(Boolean)).toBe(true);
  });
});

describe('backoff', () => {
  it('doubles per attempt with jitter, capped', () => {
    expect(backoffWithJitter(1, () => 0)).toBe(500);
    expect(backoffWithJitter(1, () => 1)).toBe(1000);
    expect(backoffWithJitter(3, () => 1)).toBe(4000);
    expect(backoffWithJitter(20, () => 1)).toBe(30_000);
  });
});
