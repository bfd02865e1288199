/**
 * "Enqueued" means on a replica: real master and replica processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { baseEnv, runCli } from '../helpers/cli.js';
import { startSentinelSet, type SentinelSet } from '../helpers/redis-sentinel.js';
import { FIXTURES_DIR } from '../../src/paths.js';

let set: SentinelSet;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  set = await startSentinelSet('main', 1, 60_000);
  env = baseEnv({ REDIS_URL: set.master.url, QUEUE_PREFIX: '{durable}' });
});

afterAll(async () => {
  set.replica.process.kill('SIGCONT');
  await set?.stop();
});

describe('upload with a replica', () => {
  it('reports rows as enqueued only once a replica has them', async () => {
    const r = await runCli(['upload', join(FIXTURES_DIR, 'seller-a-500.xlsx'), '--seller', 'D1', '--json'], env);
    expect(r.code).toBe(0);
    const { uploadId, enqueued } = JSON.parse(r.stdout);
    expect(enqueued).toBe(500);
    // read from the replica right after the command returned (replication is usually this fast
    // anyway; the case below is the one that fails without WAIT)
    const replica = set.replica.client();
    expect(await replica.hget(`durable:up:{D1}:${uploadId}`, 'total')).toBe('500');
    expect(await replica.exists(`{durable}:registrations:${uploadId}-501`)).toBe(1);
  });

  it('says so in one sentence, with exit 4, when no replica confirms in time', async () => {
    set.replica.process.kill('SIGSTOP');
    try {
      const started = Date.now();
      const r = await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'D2', '--json'], env);
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^The rows were written to the Redis master, but none of its 1 replica\(s\) confirmed them within 2000 ms.*upload the file again \(nothing is enqueued twice\)\.\n$/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      set.replica.process.kill('SIGCONT');
    }
  });
});
