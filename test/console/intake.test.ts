/** The console's intake line (src/console/intake.ts): turns, order, and a full line. */
import { describe, expect, it } from 'vitest';
import { IntakeLine, LINE_FULL } from '../../src/console/intake.js';

/** A piece of work that ends when told to, and says when it started. */
function gate() {
  let open!: () => void;
  let fail!: (err: Error) => void;
  const done = new Promise<void>((resolve, reject) => { open = resolve; fail = reject; });
  return { done, open, fail };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('IntakeLine', () => {
  it('runs at most `size` at once, the rest in the order they came', async () => {
    const line = new IntakeLine({ size: 2, maxWaiting: 10, maxWaitingBytes: 1e9 });
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const runs = gates.map((g, i) => line.run(1, async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await g.done;
      running--;
      return i;
    }));
    await tick();
    expect(started).toEqual([0, 1]);
    expect(line.length).toBe(3);
    // the second ends first: the next in line takes its turn
    gates[1]!.open();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(line.length).toBe(0);
  });

  it('passes the turn on when a piece of work fails', async () => {
    const line = new IntakeLine({ size: 1, maxWaiting: 10, maxWaitingBytes: 1e9 });
    const first = gate();
    const failing = line.run(1, () => first.done);
    const next = line.run(1, async () => 'ran');
    first.fail(new Error('refused'));
    await expect(failing).rejects.toThrow('refused');
    await expect(next).resolves.toBe('ran');
  });

  it('refuses at once, running nothing, when as many wait as may, or their bytes would pass the bound', async () => {
    const line = new IntakeLine({ size: 1, maxWaiting: 2, maxWaitingBytes: 100 });
    const g = gate();
    let ran = 0;
    const work = async () => { ran++; await g.done; };
    const running = line.run(1000, work); // the bytes of the one running count for nothing
    const waiting = [line.run(60, work)];
    // 60 + 50 bytes would pass 100
    expect(await line.run(50, work)).toBe(LINE_FULL);
    waiting.push(line.run(40, work));
    // two wait: a third may not, however small
    expect(await line.run(1, work)).toBe(LINE_FULL);
    expect(ran).toBe(1);
    g.open();
    await Promise.all([running, ...waiting]);
    expect(ran).toBe(3);
    // drained: it takes work again
    expect(await line.run(90, async () => 'again')).toBe('again');
  });
});
