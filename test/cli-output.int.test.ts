/**
 * A command's whole output reaches a reader that takes it slowly: `status --json`
 * over hundreds of uploads is far more than a pipe holds (64 KiB), and a reader
 * like `jq` or a log shipper may not drain it at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { BIN, baseEnv, startCli } from './helpers/cli.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { startRedis, type TestRedis } from './helpers/redis-server.js';
import { uploadMany } from './helpers/uploads.js';

const UPLOADS = 400;
let redis: TestRedis;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  redis = await startRedis();
  env = baseEnv({ REDIS_URL: redis.url });
  await uploadMany(env, 'OUT', UPLOADS, 3);
}, 60_000);

afterAll(async () => {
  await redis?.stop();
});

/** Runs the CLI into a pipe whose reader starts reading only after `stallMs`: the pipe fills and the rest waits in the process. */
function runWithSlowReader(args: string[], stallMs: number): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const script = `"$0" "$@" | (sleep ${stallMs / 1000}; cat); exit "\${PIPESTATUS[0]}"`;
    execFile('bash', ['-c', script, process.execPath, BIN, ...args], { env, cwd: PACKAGE_ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout });
    });
  });
}

describe('command output through a pipe', () => {
  it('status --json hands over all of a report larger than a pipe holds before it exits', async () => {
    const r = await runWithSlowReader(['status', '--json'], 1500);
    expect(r.code).toBe(0);
    // more than a pipe holds
    expect(r.stdout.length).toBeGreaterThan(96 * 1024);
    const report = JSON.parse(r.stdout) as { uploads: unknown[]; sellers: unknown[]; pool: unknown };
    expect(report.uploads).toHaveLength(UPLOADS);
    expect(report.sellers).toHaveLength(UPLOADS);
    // no pool was started
    expect(report.pool).toEqual({ up: 0, expected: 0 });
  });

  it('the plain status lists every seller', async () => {
    const r = await runWithSlowReader(['status'], 1500);
    expect(r.code).toBe(0);
    expect(r.stdout.match(/^seller OUT-\d+ /gm)).toHaveLength(UPLOADS);
    // its rows are pending and nothing would send them: said once, and no ETA is made up
    expect(r.stdout.split('\n')[0]).toBe('no worker pool is running: pending rows wait until `bulk-register workers` starts');
    expect(r.stdout.match(/ETA unknown until a worker pool runs\)$/gm)).toHaveLength(UPLOADS);
  });

  it('status --wait stopped by a signal before its upload is done prints the state, says so and exits 1: a script does not go on as if it were done', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const waiting = startCli(['status', '--wait', '--seller', 'OUT-7', '--json'], env);
      // no pool runs: the upload's 3 rows stay pending; let it read once and wait
      await new Promise((r) => setTimeout(r, 2000));
      expect(await waiting.stop(signal)).toBe(1);
      // stdout's JSON and stderr's sentence, in whichever order the two pipes delivered them
      const lines = waiting.output().trim().split('\n');
      const json = lines.find((l) => l.startsWith('{'));
      const sentence = lines.find((l) => !l.startsWith('{'));
      expect(lines).toHaveLength(2);
      expect(JSON.parse(json!).uploads).toMatchObject([{ sellerId: 'OUT-7', done: false, pending: 3 }]);
      expect(sentence).toBe('Stopped before the uploads finished: 1 upload still running, 3 rows pending.');
    }
  });
});
