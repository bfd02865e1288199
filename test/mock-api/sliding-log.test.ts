import { describe, expect, it } from 'vitest';
import { SlidingLog } from '../../src/mock-api/sliding-log.js';

describe("the API's sliding rule", () => {
  it('admits at most L in any trailing window, timed at arrival', () => {
    const log = new SlidingLog();
    for (let t = 0; t < 3; t++) expect(log.tryAdmit(t * 10, 3, 1000).admitted).toBe(true);
    expect(log.tryAdmit(500, 3, 1000)).toEqual({ admitted: false, retryAfterMs: 500 });
    expect(log.tryAdmit(1000, 3, 1000).admitted).toBe(true);
    expect(log.tryAdmit(1005, 3, 1000).admitted).toBe(false);
    expect(log.tryAdmit(1010, 3, 1000).admitted).toBe(true);
    expect(log.maxInWindow).toBe(3);
  });
});
