import { describe, expect, it } from 'vitest';
import { REASON_MAX, pauseReason } from '../../src/steering/pauses.js';

describe('a pause reason', () => {
  it('is one line without control characters, kept to REASON_MAX characters, and says when it was cut', () => {
    expect(pauseReason('stock\naudit\x1b[31m now')).toEqual({ reason: 'stock audit[31m now', cut: false });
    expect(pauseReason('  ')).toEqual({ reason: 'no reason given', cut: false });
    expect(pauseReason(undefined)).toEqual({ reason: 'no reason given', cut: false });
    const long = pauseReason('x'.repeat(REASON_MAX + 5));
    expect(long).toEqual({ reason: 'x'.repeat(REASON_MAX), cut: true });
  });
});
