import { describe, expect, it } from 'vitest';
import { outcomeOf, outcomeOfError, parseRetryAfter } from '../../src/registration/outcome.js';

describe('response -> outcome (registration-api.md)', () => {
  it('maps every response class', () => {
    expect(outcomeOf(201, { productId: 'P1' }, {}, 0)).toEqual({ kind: 'registered', productId: 'P1', replay: false });
    expect(outcomeOf(200, { productId: 'P1' }, {}, 0)).toEqual({ kind: 'registered', productId: 'P1', replay: true });
    expect(outcomeOf(422, { error: 'price too high', field: 'price' }, {}, 0)).toEqual({ kind: 'invalid', reason: 'price too high', field: 'price' });
    expect(outcomeOf(400, 'garbage', {}, 0)).toMatchObject({ kind: 'invalid' });
    expect(outcomeOf(409, { error: 'dup', productId: 'P9' }, {}, 0)).toEqual({ kind: 'duplicate', productId: 'P9', reason: 'dup' });
    expect(outcomeOf(429, {}, { 'retry-after': '3' }, 0)).toEqual({ kind: 'throttled', retryAfterMs: 3000 });
    expect(outcomeOf(503, { error: 'down' }, {}, 0)).toEqual({ kind: 'transient', reason: 'the API answered 503: down' });
    expect(outcomeOf(201, {}, {}, 0)).toMatchObject({ kind: 'transient' });
  });

  it('reads Retry-After as seconds or an HTTP date, 1 s when missing', () => {
    expect(parseRetryAfter('2', 0)).toBe(2000);
    expect(parseRetryAfter(undefined, 0)).toBe(1000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
  });

  it('turns request errors into transient outcomes a seller can read', () => {
    expect(outcomeOfError({ code: 'ECONNABORTED' }, 10_000)).toEqual({ kind: 'transient', reason: 'the API did not answer within 10000 ms' });
    expect(outcomeOfError({ code: 'ECONNRESET' }, 1)).toMatchObject({ reason: expect.stringContaining('dropped') });
    expect(outcomeOfError({ code: 'ECONNREFUSED' }, 1)).toMatchObject({ kind: 'transient' });
  });
});
