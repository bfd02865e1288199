/**
 * On a single Redis a worker sends a row's count ahead of its job's completion and
 * does not wait for the count's reply. That is safe only because both go down one
 * connection, in that order: Redis's MONITOR shows it for every row.
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

describe('a row is counted before its job finishes', () => {
  it('sends each count ahead of the job completion, on the same connection', async () => {
    // MONITOR over a plain socket: one line per command,
    // `+<time> [0 <client>] "evalsha" "<sha>" "<numkeys>" ...` (or "eval" "<script>" the first time)
    const lines: string[] = [];
    const socket = connect(stage.redis.port, '127.0.0.1');
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      const parts = buffer.split('\r\n');
      buffer = parts.pop()!;
      lines.push(...parts);
    });
    socket.write('MONITOR\r\n');
    await new Promise((r) => setTimeout(r, 200));
    stage.pool(2);
    const up = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S1', '--json'], stage.env);
    const { uploadId } = JSON.parse(up.stdout) as { uploadId: string };
    const done = await runCli(['status', '--wait', '--json'], stage.env, 60_000);
    expect(JSON.parse(done.stdout).uploads[0]).toMatchObject({ total: 7, registered: 7, pending: 0 });
    await new Promise((r) => setTimeout(r, 200));
    socket.destroy();
    const seen = lines.map((l) => /^\+[\d.]+ \[\d+ ([^\]]+)\] "eval(?:sha)?" "(?:[^"\\]|\\.)*" "(\d+)" (.*)$/i.exec(l)).filter((m) => m !== null)
      .map((m) => ({ source: m[1]!, keys: m[2]!, rest: m[3]! }));
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
});
