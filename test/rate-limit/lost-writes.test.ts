import { describe, expect, it } from 'vitest';
import { suspectUntil } from '../../src/rate-limit/lost-writes.js';

const current = { runId: 'r2', replId: 'p2', now: 1_005_000 };
const SPAN = 60_500;

describe('suspectUntil', () => {
  it('fears nothing when the master is the one recorded', () => {
    expect(suspectUntil({ runId: 'r2', replId: 'p2', suspectUntil: '0' }, current, SPAN)).toBe(0);
  });
  it('keeps a recorded wait that has not passed', () => {
    expect(suspectUntil({ runId: 'r2', replId: 'p2', suspectUntil: '1_010_000'.replace(/_/g, '') }, current, SPAN)).toBe(1_010_000);
  });
  it('waits a whole window from now after a failover or a restart (another run or replication id)', () => {
    expect(suspectUntil({ runId: 'r1', replId: 'p2', suspectUntil: '0' }, current, SPAN)).toBe(current.now + SPAN);
    expect(suspectUntil({ runId: 'r2', replId: 'p1', suspectUntil: '0' }, current, SPAN)).toBe(current.now + SPAN);
  });
  it('waits a whole window when the record was lost with everything else while this process ran', () => {
    expect(suspectUntil({}, current, SPAN, { runId: 'r1', replId: 'p1' })).toBe(current.now + SPAN);
  });
  it('does not wait on a brand-new Redis, or on one seen before with no record yet', () => {
    expect(suspectUntil({}, current, SPAN)).toBe(0);
    expect(suspectUntil({}, current, SPAN, { runId: 'r2', replId: 'p2' })).toBe(0);
  });
});
