/**
 * A command-line run against a Redis that hangs (SIGSTOP: its connections stay
 * open, nothing answers) says so on stderr after 5 s, keeps waiting, and
 * finishes as usual once Redis answers. Real processes, a private redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { baseEnv, runCli, startCli } from '../helpers/cli.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { FIXTURES_DIR } from '../../src/paths.js';

const NOTICE = /^Redis at redis:\/\/127\.0\.0\.1:\d+ has not answered for 5 s; still waiting \(it may be busy, stopped or failing over\)\. Ctrl-C stops; running the same command again later is safe\.$/m;

let redis: TestRedis;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  redis = await startRedis();
  env = baseEnv({ REDIS_URL: redis.url, QUEUE_PREFIX: '{hung}' });
});

afterAll(async () => {
  redis.process.kill('SIGCONT');
  await redis?.stop();
});

/** Runs `args` with Redis stopped until the notice is printed; returns the run's output and when the notice came. */
async function throughAHang(args: string[]): Promise<{ code: number | null; output: string; noticeAfterMs: number }> {
  redis.process.kill('SIGSTOP');
  const started = Date.now();
  const run = startCli(args, env);
  try {
    await run.waitFor(NOTICE, 10_000);
    const noticeAfterMs = Date.now() - started;
    // still waiting, not given up
    expect(run.child.exitCode).toBeNull();
    redis.process.kill('SIGCONT');
    const code = await Promise.race([run.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
    expect(code).not.toBe('hung');
    return { code: code as number | null, output: run.output(), noticeAfterMs };
  } finally {
    redis.process.kill('SIGCONT');
    await run.stop('SIGKILL');
  }
}

describe('a command-line run while Redis hangs', () => {
  it('status says it is waiting after 5 s, then answers once Redis does', async () => {
    const r = await throughAHang(['status']);
    expect(r.noticeAfterMs).toBeGreaterThanOrEqual(4500);
    expect(r.code).toBe(0);
    expect(r.output).toContain('No uploads yet.');
    // once, with no stack trace
    expect(r.output.match(new RegExp(NOTICE.source, 'gm'))).toHaveLength(1);
    expect(r.output).not.toMatch(/\n\s+at /);
  });

  it('upload says so too, and enqueues every row once Redis answers', async () => {
    const r = await throughAHang(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'H1', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.output.replace(NOTICE, '').trim())).toMatchObject({ enqueued: 7 });
  });

  it('says nothing when Redis answers', async () => {
    const r = await runCli(['status'], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});
