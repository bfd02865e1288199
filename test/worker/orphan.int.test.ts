/**
 * A worker process whose supervisor went away before the worker was ready (killed
 * while the pool was starting) must not live on: an orphan would take and send
 * rows with no supervisor to stop it, or retry an unreachable Redis forever.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { WORKER_CONFIG_ENV } from '../../src/worker/worker-config.js';
import { alive } from '../helpers/pipeline.js';
import { freePort } from '../helpers/redis-server.js';

const WORKER_MAIN = join(import.meta.dirname, '../../dist/src/worker/worker-main.js');

describe('a worker process started by a supervisor that is gone', () => {
  it('exits even when the supervisor left before the worker was ready, with its Redis unreachable', async () => {
    // nothing listens on this port: the worker would wait for Redis for ever
    const config = loadConfig({ REDIS_URL: `redis://127.0.0.1:${await freePort()}`, REGISTRATION_API_URL: 'http://127.0.0.1:1', SHUTDOWN_TIMEOUT_MS: '1000', LOG_LEVEL: 'silent' });
    for (let run = 0; run < 3; run++) {
      const child = fork(WORKER_MAIN, [], { env: { ...process.env, [WORKER_CONFIG_ENV]: JSON.stringify(config) }, stdio: 'ignore' });
      // the supervisor's end of the channel closes while the worker is still loading
      child.disconnect();
      const pid = child.pid!;
      const gone = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
      const exited = await Promise.race([gone, new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]);
      if (!exited && alive(pid)) process.kill(pid, 'SIGKILL');
      expect(exited, `run ${run + 1}: the worker was still running 15 s after its supervisor left`).toBe(true);
    }
  });
});
