/**
 * A command's whole output reaches a reader that takes it slowly: `status --json`
 * over hundreds of uploads is far more than a pipe holds (64 KiB), and a reader
 * like `jq` or a log shipper may not drain it at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { BIN, baseEnv } from './helpers/cli.js';
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
});
