import { describe, expect, it } from 'vitest';
import { AUTO_MAX, AdaptiveConcurrency, AnswerTime, HostCpu, concurrencyFor, nextConcurrency } from '../../src/worker/adaptive-concurrency.js';
import { loadConfig } from '../../src/config.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('adaptive concurrency', () => {
  it('runs one job at a time for a fast API, then one slot more per 8 ms of answer time beyond 50 ms, up to the bound', () => {
    expect(concurrencyFor(5)).toBe(1);
    expect(concurrencyFor(40)).toBe(1);
    expect(concurrencyFor(57)).toBe(1);
    expect(concurrencyFor(58)).toBe(2);
    expect(concurrencyFor(100)).toBe(7);
    expect(concurrencyFor(200)).toBe(19);
    expect(concurrencyFor(500)).toBe(57);
    expect(concurrencyFor(5000)).toBe(AUTO_MAX);
    expect(AUTO_MAX).toBe(64);
  });

  it('adds slots only while every slot is busy and the host has CPU to spare; gives them back whenever answers come faster', () => {
    const busy = { allBusy: true, hostIdle: 0.5 };
    expect(nextConcurrency(8, 500, busy)).toBe(57);
    // CPU full: answers come later because of it, not because the API slowed
    expect(nextConcurrency(8, 1000, { allBusy: true, hostIdle: 0.05 })).toBe(8);
    // slots to spare: more would only wait for work
    expect(nextConcurrency(8, 1000, { allBusy: false, hostIdle: 0.9 })).toBe(8);
    // faster answers shrink it, whatever the load
    expect(nextConcurrency(40, 200, { allBusy: false, hostIdle: 0 })).toBe(19);
    expect(nextConcurrency(2, 20, { allBusy: false, hostIdle: 0 })).toBe(1);
  });

  it('does not give a slot back for an average that only wanders around a slot boundary', () => {
    const busy = { allBusy: true, hostIdle: 0.5 };
    // 19 slots stand for 194 ms: 180 ms calls for 17, but is within the margin
    expect(concurrencyFor(180)).toBe(17);
    expect(nextConcurrency(19, 180, busy)).toBe(19);
    expect(nextConcurrency(19, 164, busy)).toBe(15);
    // a steady 150-250 ms API, averaged as the pool does: near 19 slots, changed for 1 answer
    // in 100 or fewer (taking the slots each average calls for changed them for 1 in 5)
    const t = new AnswerTime();
    let slots = 19;
    let changes = 0;
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let i = 0; i < 2000; i++) {
      const next = nextConcurrency(slots, t.observe(150 + random() * 100), busy);
      if (next !== slots) changes++;
      slots = next;
    }
    expect(changes).toBeLessThanOrEqual(20);
    expect(slots).toBeGreaterThanOrEqual(18);
    expect(slots).toBeLessThanOrEqual(22);
  });

  it('follows a moving average of answer times', () => {
    const t = new AnswerTime();
    expect(t.ms).toBeUndefined();
    expect(t.observe(200)).toBe(200);
    expect(t.observe(100)).toBe(180);
  });

  it('grows on a request still unanswered, before any answer comes (a slow API on a fresh pool)', async () => {
    const changes: number[] = [];
    const adaptive = new AdaptiveConcurrency(1, (slots) => changes.push(slots), { sample: () => 0.5, idle: 0.5 });
    try {
      const slow = adaptive.track(() => sleep(700));
      await sleep(AdaptiveConcurrency.TICK_MS * 2 + 50);
      // its one slot busy for a tick: answers take at least that long (the request
      // started a moment after the timer, so at the first tick it is a little younger)
      expect(changes.length).toBe(1);
      expect(adaptive.slots).toBeGreaterThanOrEqual(concurrencyFor(AdaptiveConcurrency.TICK_MS) - 1);
      const grown = adaptive.slots;
      await slow;
      // an answer of 700 ms calls for more, but the slots already taken are not all busy
      expect(adaptive.slots).toBe(grown);
    } finally {
      adaptive.stop();
    }
  });

  it('takes no answer time from a request that got none (an API that hangs earns no more requests)', async () => {
    const adaptive = new AdaptiveConcurrency(8, () => undefined, { sample: () => 0.5, idle: 0.5 });
    try {
      // answered once: the process no longer grows on unanswered requests
      await adaptive.track(async () => 'answer', () => true);
      expect(adaptive.slots).toBe(1);
      const hung = adaptive.track(() => sleep(AdaptiveConcurrency.TICK_MS * 2 + 50).then(() => 'timeout'), (r) => r !== 'timeout');
      await sleep(AdaptiveConcurrency.TICK_MS * 2);
      expect(adaptive.slots).toBe(1);
      await hung;
      expect(adaptive.slots).toBe(1);
    } finally {
      adaptive.stop();
    }
  });

  it('stays put while the host CPU is full, however long its requests take', async () => {
    const changes: number[] = [];
    const adaptive = new AdaptiveConcurrency(1, (slots) => changes.push(slots), { sample: () => 0, idle: 0 });
    try {
      await adaptive.track(() => sleep(AdaptiveConcurrency.TICK_MS * 2 + 50));
      expect(changes).toEqual([]);
      expect(adaptive.slots).toBe(1);
    } finally {
      adaptive.stop();
    }
  });

  it("reads the host's idle CPU share", () => {
    const cpu = new HostCpu();
    let x = 0;
    for (let i = 0; i < 2e6; i++) x += i;
    expect(x).toBeGreaterThan(0);
    const idle = cpu.sample();
    expect(idle).toBeGreaterThanOrEqual(0);
    expect(idle).toBeLessThanOrEqual(1);
  });

  it('is the default, and a number fixes it', () => {
    expect(loadConfig({}).workerConcurrency).toBe('auto');
    expect(loadConfig({ WORKER_CONCURRENCY: '4' }).workerConcurrency).toBe(4);
    expect(() => loadConfig({ WORKER_CONCURRENCY: 'many' })).toThrow(/WORKER_CONCURRENCY="many" is invalid: expected auto or a whole number/);
  });
});
