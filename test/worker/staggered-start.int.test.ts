/**
 * The pool starts its processes a few at a time (worker/supervisor.ts): as many
 * at once as it is told (the host's cores by default), then one more each time
 * one says it is ready, or after the stagger when none does. Real OS processes,
 * with a stand-in worker that says ready when told to.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { WorkerPool } from '../../src/worker/supervisor.js';
import { until } from '../helpers/until.js';

const dir = mkdtempSync(join(tmpdir(), 'br-stagger-'));
const entry = join(dir, 'stand-in.mjs');
// says ready READY_AFTER_MS after it starts (never when negative), and exits when told to stop
writeFileSync(entry, `
const after = Number(process.env.READY_AFTER_MS);
if (after >= 0) setTimeout(() => process.send({ type: 'ready' }), after);
process.on('message', (m) => { if (m.type === 'shutdown') process.exit(0); });
`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function poolOf(processes: number, readyAfterMs: number, opts: { startTogether: number; staggerMs?: number }) {
  const events: Array<{ at: number; slot: number; what: 'start' | 'ready' }> = [];
  const t0 = Date.now();
  const pool = new WorkerPool({
    processes, env: { ...process.env, READY_AFTER_MS: String(readyAfterMs) }, shutdownTimeoutMs: 2000, entry,
    log: createLogger({ level: 'silent', pretty: false, name: 'test' }),
    onSlotChange: (slot, up) => { if (up) events.push({ at: Date.now() - t0, slot, what: 'start' }); },
    onMessage: (slot, m) => { if (m.type === 'ready') events.push({ at: Date.now() - t0, slot, what: 'ready' }); },
    ...opts,
  });
  return { pool, events };
}

describe('the pool start', () => {
  it('starts as many processes at once as told, and one more each time one is ready', async () => {
    const { pool, events } = poolOf(6, 300, { startTogether: 2 });
    pool.start();
    try {
      await until('every process ready', async () => pool.ready === 6, 15_000);
      const starts = events.filter((e) => e.what === 'start');
      expect(starts).toHaveLength(6);
      // never more than 2 started and not yet ready
      let unready = 0;
      for (const e of events) {
        unready += e.what === 'start' ? 1 : -1;
        expect(unready).toBeLessThanOrEqual(2);
      }
      // the first two together, the third only after a process said it was ready
      expect(starts[1]!.at - starts[0]!.at).toBeLessThan(250);
      const firstReady = events.find((e) => e.what === 'ready')!;
      expect(starts[2]!.at).toBeGreaterThanOrEqual(firstReady.at);
      expect(pool.running).toBe(6);
    } finally {
      await pool.stop();
    }
    expect(pool.ready).toBe(0);
  });

  it('starts the next process after the stagger when none says it is ready, and stops the start when stopped', async () => {
    const { pool, events } = poolOf(3, -1, { startTogether: 1, staggerMs: 300 });
    pool.start();
    try {
      await until('every process started', async () => pool.running === 3, 10_000);
      const starts = events.filter((e) => e.what === 'start').map((e) => e.at);
      expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(280);
      expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(280);
      expect(pool.ready).toBe(0);
    } finally {
      await pool.stop();
    }
    const { pool: stopped, events: none } = poolOf(4, -1, { startTogether: 1, staggerMs: 200 });
    stopped.start();
    await stopped.stop();
    await new Promise((r) => setTimeout(r, 600));
    expect(none.filter((e) => e.what === 'start')).toHaveLength(1);
  });
});
