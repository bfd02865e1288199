/**
 * The retry schedule of an undelivered event: UPLOAD_WEBHOOK_RETRY_MS, doubling
 * up to 1 h, and the last of WEBHOOK_ATTEMPTS more than 24 h after the first at
 * any first wait the configuration allows.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { WEBHOOK_ATTEMPTS, webhookBackoff } from '../../src/steering/webhooks.js';

const lastAfterFirstMs = (firstMs: number) => {
  let total = 0;
  for (let made = 1; made < WEBHOOK_ATTEMPTS; made++) total += webhookBackoff(made, firstMs);
  return total;
};

describe('webhook retries', () => {
  it('wait the configured time, then twice as long each time, up to 1 h', () => {
    expect([1, 2, 3, 4].map((n) => webhookBackoff(n, 5000))).toEqual([5000, 10_000, 20_000, 40_000]);
    expect(webhookBackoff(12, 5000)).toBe(3_600_000);
    expect(webhookBackoff(39, 100)).toBe(3_600_000);
  });

  it('go on for more than 24 h from the least to the most the configuration allows', () => {
    const day = 86_400_000;
    for (const first of [100, 5000, 600_000]) expect(lastAfterFirstMs(first), `${first} ms`).toBeGreaterThan(day);
    expect(loadConfig({}).webhookRetryMs).toBe(5000);
    expect(() => loadConfig({ UPLOAD_WEBHOOK_RETRY_MS: '99' })).toThrow(/UPLOAD_WEBHOOK_RETRY_MS/);
  });
});
