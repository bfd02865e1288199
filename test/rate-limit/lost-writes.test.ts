import { describe, expect, it } from 'vitest';
import { suspectUntil } from '../../src/rate-limit/lost-writes.js';

const current = { runId: 'r2', replId: 'p2', startedAt: 1_000_000, now: 1_005_000 };
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
  it('waits until a window after its start for a young Redis with no record (it may have lost everything)', () => {
    expect(suspectUntil({}, current, SPAN)).toBe(current.startedAt + SPAN);
    expect(suspectUntil({}, { ...current, now: current.startedAt + SPAN + 1 }, SPAN)).toBe(0);
  });
});
