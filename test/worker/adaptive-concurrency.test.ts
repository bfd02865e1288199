import { describe, expect, it } from 'vitest';
import { AUTO_MAX, AnswerTime, concurrencyFor } from '../../src/worker/adaptive-concurrency.js';
import { loadConfig } from '../../src/config.js';

describe('adaptive concurrency', () => {
  it('runs one job at a time for a fast API and one slot per 25 ms of answer time up to the bound', () => {
    expect(concurrencyFor(5)).toBe(1);
    expect(concurrencyFor(40)).toBe(1);
    expect(concurrencyFor(100)).toBe(4);
    expect(concurrencyFor(200)).toBe(8);
    expect(concurrencyFor(5000)).toBe(AUTO_MAX);
  });
  it('follows a moving average of answer times', () => {
    const t = new AnswerTime();
    expect(t.ms).toBeUndefined();
    expect(t.observe(200)).toBe(200);
    expect(t.observe(100)).toBe(180);
  });
  it('is the default, and a number fixes it', () => {
    expect(loadConfig({}).workerConcurrency).toBe('auto');
    expect(loadConfig({ WORKER_CONCURRENCY: '4' }).workerConcurrency).toBe(4);
    expect(() => loadConfig({ WORKER_CONCURRENCY: 'many' })).toThrow(/WORKER_CONCURRENCY="many" is invalid: expected auto or a whole number/);
  });
});
