/**
 * A worker process's view of the steering hash takes it from two sources, its
 * supervisor's messages and its own reads, which are not ordered: its own read
 * answered late must not undo a pause the supervisor's newer read brought.
 */
import { describe, expect, it } from 'vitest';
import { PauseWatch } from '../../src/steering/pause-watch.js';
import type { RedisClient } from '../../src/redis.js';

const paused = { 'pause:S1': JSON.stringify({ reason: 'stock count', by: 'operator', since: 1 }) };

/** A Redis whose HGETALL answers only when the test says so, with what it was when the read was issued. */
function slowRedis() {
  const pending: Array<() => void> = [];
  let hash: Record<string, string> = {};
  const redis = {
    hgetall: () => {
      const asOfIssue = { ...hash };
      return new Promise<Record<string, string>>((resolve) => pending.push(() => resolve(asOfIssue)));
    },
  } as unknown as RedisClient;
  return { redis, set: (h: Record<string, string>) => { hash = h; }, answer: () => pending.shift()!() };
}

describe('PauseWatch', () => {
  it('keeps a pause the supervisor sent when its own read, issued before the pause, is answered after it', async () => {
    const r = slowRedis();
    const watch = new PauseWatch(r.redis, 'ns', 60_000);
    const own = watch.refresh();
    // the operator pauses S1; the supervisor's read sees it and sends it
    r.set(paused);
    watch.applyRelayed(paused);
    expect(watch.of('S1')).toMatchObject({ reason: 'stock count' });
    // the process's own read, issued before the pause, is answered now
    r.answer();
    await own;
    expect(watch.of('S1')).toMatchObject({ reason: 'stock count' });
    // the next read of its own takes in the hash as it is
    const next = watch.refresh();
    r.answer();
    await next;
    expect(watch.of('S1')).toMatchObject({ reason: 'stock count' });
  });

  it('takes in its own read when no message came meanwhile, a resume included', async () => {
    const r = slowRedis();
    const watch = new PauseWatch(r.redis, 'ns', 60_000);
    watch.applyRelayed(paused);
    r.set({});
    const own = watch.refresh();
    r.answer();
    await own;
    expect(watch.of('S1')).toBeUndefined();
  });
});
