/**
 * SELLER_CREDENTIALS_FILE edited under a running pool of several processes: each
 * process follows the file, and the pool says once (its supervisor) that an edit
 * cannot be used or that the file was reloaded, not once per process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, startCli, poolReady } from '../helpers/cli.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { CREDENTIALS_POLL_MS } from '../../src/registration/credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'br-credentials-pool-'));
const file = join(dir, 'credentials.json');
/** Written as an operator's tooling writes it: whole, renamed into place. */
const save = (text: string) => {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
};
const count = (output: string, msg: string) => output.split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).length;

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describe('the credentials file under a pool of 3 processes', () => {
  it('logs a bad edit once and a reload once, for the whole pool', async () => {
    save(JSON.stringify({ S1: { clientSecret: 'pool-secret-1' } }));
    const env = baseEnv({ REDIS_URL: redis.url, REGISTRATION_API_URL: 'http://127.0.0.1:9', SELLER_CREDENTIALS_FILE: file, QUEUE_PREFIX: '{creds-pool}' });
    const pool = startCli(['workers', '--processes', '3'], env);
    try {
      await poolReady(pool, 3, 60_000);
      save('{ "S1": { "clientSecret": "half-writ');
      await pool.waitFor(/SELLER_CREDENTIALS_FILE changed but cannot be used/, 10_000);
      save('[]');
      await new Promise((r) => setTimeout(r, 3 * CREDENTIALS_POLL_MS));
      save(JSON.stringify({ S1: { clientSecret: 'pool-secret-2' } }));
      await pool.waitFor(/seller credentials reloaded/, 10_000);
      await new Promise((r) => setTimeout(r, 3 * CREDENTIALS_POLL_MS));
      const out = pool.output();
      // two bad edits, each said once; one reload, said once
      expect(count(out, 'SELLER_CREDENTIALS_FILE changed but cannot be used: keeping its last good contents')).toBe(2);
      expect(count(out, 'seller credentials reloaded')).toBe(1);
      expect(out).not.toMatch(/half-writ|pool-secret/);
    } finally {
      await pool.stop();
    }
  });
});
