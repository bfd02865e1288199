/**
 * A command-line run against a Redis that hangs (SIGSTOP: its connections stay
 * open, nothing answers) says so on stderr after 5 s, keeps waiting, and
 * finishes as usual once Redis answers; one whose connection is never answered
 * gives up after 10 s with one sentence. Real processes, a private redis-server.
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

/** Runs each of `runs` with Redis stopped until every one has printed the notice; their output once Redis answers again. */
async function throughAHang(runs: string[][]): Promise<Array<{ code: number | null; output: string; noticeAfterMs: number }>> {
  redis.process.kill('SIGSTOP');
  const started = Date.now();
  const running = runs.map((args) => startCli(args, env));
  try {
    const noticeAfterMs = await Promise.all(running.map(async (run) => {
      await run.waitFor(NOTICE, 9_000);
      return Date.now() - started;
    }));
    // still waiting, not given up
    for (const run of running) expect(run.child.exitCode).toBeNull();
    redis.process.kill('SIGCONT');
    const codes = await Promise.race([Promise.all(running.map((run) => run.exited)), new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
    expect(codes).not.toBe('hung');
    return running.map((run, i) => ({ code: (codes as Array<number | null>)[i]!, output: run.output(), noticeAfterMs: noticeAfterMs[i]! }));
  } finally {
    redis.process.kill('SIGCONT');
    await Promise.all(running.map((run) => run.stop('SIGKILL')));
  }
}

describe('a command-line run while Redis hangs', () => {
  it('says it is waiting after 5 s, then finishes once Redis answers: status, and upload enqueuing every row', async () => {
    const [status, upload] = await throughAHang([['status'], ['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'H1', '--json']]);
    for (const r of [status!, upload!]) {
      expect(r.noticeAfterMs).toBeGreaterThanOrEqual(4500);
      expect(r.code).toBe(0);
      // once, with no stack trace
      expect(r.output.match(new RegExp(NOTICE.source, 'gm'))).toHaveLength(1);
      expect(r.output).not.toMatch(/\n\s+at /);
    }
    // both waited on the same Redis: once it answers, status reads before the upload's rows
    // are in, or after (a CI run saw both orders)
    expect(status!.output).toMatch(/No uploads yet\.|upload [0-9a-f]+ +\d+% +total 7 /);
    expect(JSON.parse(upload!.output.replace(NOTICE, '').trim())).toMatchObject({ enqueued: 7 });
  });

  it('gives up on a Redis that never answers its connection after 10 s: exit 1, one sentence saying what it saw', async () => {
    redis.process.kill('SIGSTOP');
    try {
      const started = Date.now();
      const r = await runCli(['status'], env, 20_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n').filter(Boolean)).toEqual([
        expect.stringMatching(NOTICE),
        expect.stringMatching(/^Cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: it accepted the connection but answered nothing within 10 s \(it may be stopped, overloaded or failing over\); run the command again once it answers\.$/),
      ]);
    } finally {
      redis.process.kill('SIGCONT');
    }
  });

  it('says nothing when Redis answers', async () => {
    const r = await runCli(['status'], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});
