import { describe, expect, it } from 'vitest';
import { judge } from '../../src/rate-limit/lost-writes.js';

const current = { runId: 'r2', replId: 'p2', now: 1_005_000 };

describe('judge', () => {
  it('fears nothing when the master is the one recorded and this worker\'s last grant is there', () => {
    expect(judge({ runId: 'r2', replId: 'p2' }, current, false)).toEqual({ lost: false, changed: false });
  });
  it('sees a failover or a restart (another run or replication id) as a change, not yet as a loss', () => {
    expect(judge({ runId: 'r1', replId: 'p2' }, current, false)).toEqual({ lost: false, changed: true });
    expect(judge({ runId: 'r2', replId: 'p1' }, current, false)).toEqual({ lost: false, changed: true });
  });
  it('counts writes lost when this worker\'s last grant is missing, whatever the record says', () => {
    expect(judge({ runId: 'r1', replId: 'p1' }, current, true)).toEqual({ lost: true, changed: true });
    expect(judge({ runId: 'r2', replId: 'p2' }, current, true)).toEqual({ lost: true, changed: false });
    expect(judge({}, current, true)).toEqual({ lost: true, changed: false });
  });
  it('counts writes lost when the record was lost with everything else while this process ran', () => {
    expect(judge({}, current, false, { runId: 'r1', replId: 'p1' })).toEqual({ lost: true, changed: true });
  });
  it('fears nothing on a brand-new Redis, or on one seen before with no record yet', () => {
    expect(judge({}, current, false)).toEqual({ lost: false, changed: false });
    expect(judge({}, current, false, { runId: 'r2', replId: 'p2' })).toEqual({ lost: false, changed: false });
  });
});
