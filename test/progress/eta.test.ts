import { describe, expect, it } from 'vitest';
import { crossesDecile, etaMs, formatDuration, formatWindow, paceOf, waitingForPermit } from '../../src/progress/eta.js';
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
  it('formats a rule\'s window as written, not rounded', () => {
    expect(formatWindow(60_000)).toBe('1m');
    expect(formatWindow(120_000)).toBe('2m');
    expect(formatWindow(90_000)).toBe('90s');
    expect(formatWindow(10_000)).toBe('10s');
    expect(formatWindow(1500)).toBe('1500ms');
    expect(formatWindow(600)).toBe('600ms');
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

describe('paceOf', () => {
  const base = { pending: 40, limit: 100, spanMs: 60_500, nextPermitInMs: 0, plannedAhead: 0, recentSends: 10, recentSpanMs: 5000 };
  it('says the rule sets the pace when the seller is throttled or sends at its limit', () => {
    expect(paceOf({ ...base, nextPermitInMs: 3000 })).toEqual({ etaMs: 3000, pace: 'rule' });
    expect(paceOf({ ...base, plannedAhead: 5, pending: 150, nextPermitInMs: 100 })).toEqual({ etaMs: 100 + 60_500, pace: 'rule' });
    expect(paceOf({ ...base, recentSends: 100 }).pace).toBe('rule');
  });
  it('says the pool sets the pace when rows wait for a worker, with an ETA from the rate the seller is served at', () => {
    // 10 sends in the last 5 s: 2 rows/s, 40 rows left
    expect(paceOf(base)).toEqual({ etaMs: 20_000, pace: 'pool' });
    // not yet a rate: the rule's figure, as a lower bound
    expect(paceOf({ ...base, recentSends: 1 })).toEqual({ etaMs: 0, pace: 'pool' });
  });
  it('never promises more than the rule allows', () => {
    expect(paceOf({ ...base, pending: 500, recentSends: 99, recentSpanMs: 1000 }).etaMs).toBe(4 * 60_500);
  });
  it('is 0 with nothing pending', () => {
    expect(paceOf({ ...base, pending: 0 })).toEqual({ etaMs: 0, pace: 'rule' });
  });
});

describe('waitingForPermit', () => {
  const seller = { pending: 450, plannedAhead: 0, deferredMs: 0, inFlight: 0, limit: 50, recentSends: 50 };
  it('is the rows holding a later slot when nothing is deferred', () => {
    expect(waitingForPermit({ ...seller, plannedAhead: 30 })).toBe(30);
    expect(waitingForPermit(seller)).toBe(0);
  });
  it('counts deferred rows, which hold no slot yet: every unfinished row neither in flight nor able to go now', () => {
    // a full window, 5 answers outstanding: the other 445 wait
    expect(waitingForPermit({ ...seller, deferredMs: 60_000, inFlight: 5, pending: 450 })).toBe(445);
    // 20 sends so far in the window: 30 more may go now
    expect(waitingForPermit({ ...seller, deferredMs: 60_000, recentSends: 20, inFlight: 20, pending: 480 })).toBe(430);
    expect(waitingForPermit({ ...seller, deferredMs: 60_000, plannedAhead: 500, pending: 480 })).toBe(500);
    expect(waitingForPermit({ ...seller, deferredMs: 60_000, pending: 0 })).toBe(0);
  });
});
