/**
 * A console started with a short operator token or link-signing key says so at
 * start-up (a short one can be guessed by trying), without printing either value;
 * long ones draw no warning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, startCli } from '../helpers/cli.js';
import { freePort } from '../../src/dev/redis-server.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let redis: TestRedis;
beforeAll(async () => { redis = await startRedis(); });
afterAll(async () => { await redis?.stop(); });

async function startUp(secrets: Record<string, string>): Promise<string> {
  const env = baseEnv({ REDIS_URL: redis.url, QUEUE_PREFIX: '{short}', ...secrets });
  const consoleProcess = startCli(['console', '--port', String(await freePort())], env);
  try {
    await consoleProcess.waitFor(/console listening[\s\S]*\n/);
    // the warnings follow the listening line in the same turn
    await new Promise((r) => setTimeout(r, 200));
    return consoleProcess.output();
  } finally {
    await consoleProcess.stop();
  }
}

describe('console start-up with short secrets', () => {
  it('warns of a short operator token and a short link key, naming neither value', async () => {
    const out = await startUp({ CONSOLE_OPERATOR_TOKEN: 'op4x7', CONSOLE_SECRET: 'k9z' });
    expect(out).toContain('CONSOLE_OPERATOR_TOKEN is only 5 characters long, short enough to be guessed');
    expect(out).toContain('CONSOLE_SECRET is only 3 characters long, short enough to be guessed');
    expect(out).not.toContain('op4x7');
    expect(out).not.toContain('k9z');
  });

  it('says nothing of secrets of 16 characters or more', async () => {
    const out = await startUp({ CONSOLE_OPERATOR_TOKEN: 'a'.repeat(16), CONSOLE_SECRET: 'b'.repeat(40) });
    expect(out).toMatch(/console listening/);
    expect(out).not.toContain('short enough to be guessed');
  });
});
