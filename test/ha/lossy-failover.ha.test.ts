/**
 * A failover that loses writes: the replica is stopped (SIGSTOP) and cut off
 * from the master, which goes on granting and registering alone for 1.5 s;
 * then the master is SIGKILLed and the replica resumed, and the Sentinels
 * promote it without those writes. The limiter's records of the sends in
 * them are gone: the workers find their last grants missing and no seller
 * sends until a whole window has passed. Asserted: no 429, no row registered
 * twice, no row lost that upload reported as enqueued (its uploads were
 * confirmed by the replica before the fault).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startSentinelSet } from '../helpers/redis-sentinel.js';
import { RUNS, cleanUp, runCase, summary, type RunResult } from './harness.js';

const results: RunResult[] = [];
afterAll(() => {
  if (results.length) console.log(`[ha] ${summary(results)}`);
  cleanUp();
});

const offset = async (c: Redis) => Number(/master_repl_offset:(\d+)/.exec(await c.info('replication'))?.[1] ?? 0);

describe('a failover that loses writes', () => {
  it(`breaks no seller's rule: no 429, none registered twice, no enqueued row lost (${RUNS} runs)`, async () => {
    for (let run = 1; run <= RUNS; run++) {
      const set = await startSentinelSet('ha', 3, 1000);
      try {
        let lostBytes = 0;
        const r = await runCase('lossy-failover', run, {
          REDIS_URL: 'redis://127.0.0.1:1', REDIS_SENTINELS: set.seeds, REDIS_SENTINEL_NAME: 'ha',
        }, async () => {
          const master = new Redis({ port: set.master.port, lazyConnect: true });
          master.on('error', () => undefined);
          await master.connect();
          set.replica.process.kill('SIGSTOP');
          await master.call('CLIENT', 'KILL', 'TYPE', 'replica');
          const cutAt = await offset(master);
          await new Promise((res) => setTimeout(res, 1500));
          const lastAt = await offset(master);
          set.master.process.kill('SIGKILL');
          const faultAt = Date.now();
          master.disconnect();
          set.replica.process.kill('SIGCONT');
          lostBytes = lastAt - cutAt;
          return faultAt;
        });
        r.note = `master wrote ${lostBytes} bytes the replica never had`;
        results.push(r);
        expect(lostBytes, 'the fault lost writes').toBeGreaterThan(0);
      } finally {
        set.replica.process.kill('SIGCONT');
        await set.stop();
      }
    }
    for (const r of results) expect(r, JSON.stringify(r)).toMatchObject({ lost: 0, twice: 0, tooMany: 0 });
  }, 20 * 60_000);
});
