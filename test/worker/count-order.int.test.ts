/**
 * On a single Redis a worker sends a row's count ahead of its job's completion and
 * does not wait for the count's reply. That is safe only because both go down one
 * connection, in that order: Redis's MONITOR shows it for every row. Behind the
 * completion, which fetches the next job, goes that job's permit (permit-next.lua).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { FIXTURES_DIR } from '../../src/paths.js';

let stage: Stage;
beforeAll(async () => {
  stage = await startStage({ RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '1000', QUEUE_PREFIX: '{order}' }, { MOCK_LATENCY_MS: '1-5' });
});
afterAll(async () => {
  await stage?.stop();
});

/**
 * MONITOR over a plain socket: one line per command,
 * `+<time> [0 <client>] "evalsha" "<sha>" "<numkeys>" ...` (or "eval" "<script>" the first time).
 */
function monitor(port: number) {
  const lines: string[] = [];
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    const parts = buffer.split('\r\n');
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  socket.write('MONITOR\r\n');
  return { lines, stop: () => socket.destroy() };
}

/** The script calls seen (eval or evalsha): which client, how many keys, the rest of the line. */
const scriptCalls = (lines: string[]) =>
  lines.map((l) => /^\+[\d.]+ \[\d+ ([^\]]+)\] "eval(?:sha)?" "(?:[^"\\]|\\.)*" "(\d+)" (.*)$/i.exec(l)).filter((m) => m !== null)
    .map((m) => ({ source: m[1]!, keys: m[2]!, rest: m[3]! }));

describe('the write that finishes a row', () => {
  it("carries the row's count ahead of its job's completion, on the same connection", async () => {
    const watch = monitor(stage.redis.port);
    await new Promise((r) => setTimeout(r, 200));
    stage.pool(2);
    const up = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S1', '--json'], stage.env);
    const { uploadId } = JSON.parse(up.stdout) as { uploadId: string };
    const done = await runCli(['status', '--wait', '--json'], stage.env, 60_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ total: 7, registered: 7, pending: 0 });
    await new Promise((r) => setTimeout(r, 200));
    watch.stop();
    const seen = scriptCalls(watch.lines);
    const rows = [...new Set(seen.flatMap((c) => [...c.rest.matchAll(new RegExp(`"${uploadId}:(\\d+)"`, 'g'))].map((m) => Number(m[1]))))];
    expect(rows).toHaveLength(7);
    for (const row of rows) {
      // complete-send.lua (7 keys) with the row member and its outcome
      const count = seen.findIndex((c) => c.keys === '7' && c.rest.includes(`"${uploadId}:${row}"`) && c.rest.includes('"registered"'));
      // BullMQ's moveToFinished (14 keys) for the row's job
      const finish = seen.findIndex((c) => c.keys === '14' && c.rest.includes(`"${uploadId}-${row}"`));
      expect(count, `row ${row} counted`).toBeGreaterThanOrEqual(0);
      expect(finish, `row ${row} finished`).toBeGreaterThanOrEqual(0);
      expect(count).toBeLessThan(finish);
      expect(seen[count]!.source).toBe(seen[finish]!.source);
    }
  });

  it("asks for the next row's permit behind the completion or the fetch that fetches it, and the row uses it", async () => {
    for (const earlier of stage.pools.splice(0)) await earlier.stop('SIGTERM');
    const watch = monitor(stage.redis.port);
    await new Promise((r) => setTimeout(r, 200));
    // one slot: each write holds one row's count, its completion and the ask behind them. With
    // two (WORKER_CONCURRENCY=auto grows one when answers slow down, as on a loaded CI host),
    // one slot's ask may lie between the other slot's count and completion, which is allowed
    stage.pool(1, { WORKER_CONCURRENCY: '1' });
    const up = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S2', '--json'], stage.env);
    const { uploadId } = JSON.parse(up.stdout) as { uploadId: string };
    const done = await runCli(['status', '--seller', 'S2', '--wait', '--json'], stage.env, 60_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ total: 7, registered: 7, pending: 0 });
    await new Promise((r) => setTimeout(r, 200));
    watch.stop();
    const seen = scriptCalls(watch.lines);
    // sliding-window.lua (8 keys, the last the seller's announced rule) asked by a row itself; permit-next.lua (1 key: the active list)
    const own = seen.filter((c) => c.keys === '8' && c.rest.includes(':api-rule"') && c.rest.includes(`"${uploadId}:`));
    const ahead = seen.map((c, i) => ({ ...c, i })).filter((c) => c.keys === '1' && c.rest.startsWith('"{order}:registrations:active" "{order}:registrations:"'));
    // one worker: the first row is fetched by a fetch of its own (BullMQ's moveToActive, 11 keys)
    // with its permit asked behind it, each later one by the completion before it. On this fresh
    // Redis, BullMQ's fetch script may be loaded on the spot (EVALSHA refused, then EVAL), and so
    // reach Redis behind the ask, which then finds no job: that row asks for its own.
    expect(own.length).toBeLessThanOrEqual(2);
    expect(ahead.length).toBeGreaterThanOrEqual(7 - own.length);
    // A row's count (complete-send.lua: 7 keys, with its outcome) and its job's completion
    // (BullMQ's moveToFinished: 14 keys) go down one connection. A permit asked ahead lies
    // behind a completion or a fetch on it, never between a count and its completion. Other
    // commands may share that write: the next asks of the same write, or a denied row's move
    // to the delayed set (changePriority, also 7 keys but no outcome), so those are passed over.
    const countCompletionOrFetch = (c: (typeof seen)[number]) => c.keys === '14' || c.keys === '11' || (c.keys === '7' && c.rest.includes('"registered"'));
    const behind = ahead.map((a) => seen.slice(0, a.i).filter((c) => c.source === a.source && countCompletionOrFetch(c)).at(-1));
    // some behind a fetch of the worker's own (11 keys), the rest behind completions
    expect(behind.some((c) => c?.keys === '11')).toBe(true);
    // (nothing before it: that first fetch, loaded on the spot.) An ask behind a count went out
    // before that row's completion, which BullMQ issued a turn of the event loop later: seen in
    // a few CI rehearsals on a loaded 2-core host, once in a run. It finds no job locked with
    // the worker's token but the finished one, which it passes over, so it grants nothing, and
    // the next row asks for its own permit: each such ask has a row of `own` to match it.
    const early = [...behind.entries()].filter(([, before]) => before?.keys === '7').map(([n]) => n);
    const around = early.map((n) => `ask ${n}:\n${seen.slice(Math.max(0, ahead[n]!.i - 6), ahead[n]!.i + 2).map((c) => `${c.source} ${c.keys} ${c.rest.slice(0, 90)}`).join('\n')}`).join('\n');
    expect(early.length, `asks behind a count (the commands around each):\n${around}`).toBeLessThanOrEqual(1);
    expect(early.length, 'an ask behind a count found no job: its row asked for itself').toBeLessThanOrEqual(own.length);
    expect((await stage.stats()).sellers.S2).toMatchObject({ registered: 7, tooMany: 0 });
  });
});
