import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWakeKicker } from '../../src/worker/wake-kick.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('wake kicker', () => {
  it('sends one command per 5 ms step once the step is due, and none after stop', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const kick = vi.fn(async () => 0);
    const kicker = createWakeKicker(kick, () => Date.now());
    kicker.wakeAt(1_000_051);
    kicker.wakeAt(1_000_054); // the same step: due by 1,000,055
    kicker.wakeAt(1_000_061); // a later step: due by 1,000,065
    await vi.advanceTimersByTimeAsync(54);
    expect(kick).toHaveBeenCalledTimes(0); // never before the row is due
    await vi.advanceTimersByTimeAsync(2);
    expect(kick).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(kick).toHaveBeenCalledTimes(2);
    kicker.wakeAt(1_000_200);
    kicker.stop();
    await vi.advanceTimersByTimeAsync(500);
    expect(kick).toHaveBeenCalledTimes(2);
  });

  it('ignores a failed command', async () => {
    vi.useFakeTimers({ now: 0 });
    const kicker = createWakeKicker(async () => { throw new Error('Redis away'); }, () => Date.now());
    kicker.wakeAt(10);
    await vi.advanceTimersByTimeAsync(20);
  });
});
