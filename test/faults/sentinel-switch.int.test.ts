/**
 * A long-lived connection through the Sentinels leaves a hung master once the
 * Sentinels promote its replica (src/sentinel-switch.ts): a command out to the
 * master when it froze is answered by the new master, long before the old one
 * wakes, and so is one on a connection BullMQ would have duplicated from it.
 * Once every such connection is closed, the process no longer listens to the
 * Sentinels. A command-line run started while the master hangs is answered by
 * the new master too, instead of waiting for the old one or giving up. Real
 * redis-server, Sentinel and `bulk-register` processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { namespaceOf, uploadIndexKey } from '../../src/keys.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { createRedis } from '../../src/redis.js';
import { baseEnv, runCli } from '../helpers/cli.js';
import { startSentinelSet, watchSwitch, type SentinelSet } from '../helpers/redis-sentinel.js';

const FREEZE_MS = 15_000;
let set: SentinelSet;

beforeAll(async () => {
  set = await startSentinelSet('switch', 1, 1000);
});

afterAll(async () => {
  set.master.process.kill('SIGCONT');
  await set.stop();
});

/** The Sentinel's clients named as the switch names its subscribers. */
async function listeners(): Promise<number> {
  const sentinel = set.sentinelClient();
  try {
    const list = (await sentinel.call('CLIENT', 'LIST')) as string;
    return list.split('\n').filter((l) => l.includes('name=bulk-register:sentinel-switch')).length;
  } finally {
    sentinel.disconnect();
  }
}

describe('a connection through the Sentinels', () => {
  it('is answered by the new master while the old one hangs, and stops listening once closed', async () => {
    const config = loadConfig({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_SENTINELS: set.seeds, REDIS_SENTINEL_NAME: 'switch' });
    const client = createRedis(config, 'worker');
    await client.connect();
    const copy = (client as Redis).duplicate();
    copy.on('error', () => undefined);
    await client.set('k', '1');
    // on the replica before the freeze: the promoted replica must hold it for the INCR below
    // to read 2 (replication is asynchronous; once, under a loaded CI host, it had not arrived)
    expect(await client.call('WAIT', '1', '5000')).toBe(1);
    await copy.ping();
    await expect.poll(listeners, { timeout: 5000 }).toBe(1);

    set.master.process.kill('SIGSTOP');
    const frozenAt = Date.now();
    // the old master wakes by itself: a connection that waited for it is answered then
    const wake = setTimeout(() => set.master.process.kill('SIGCONT'), FREEZE_MS);
    const [incremented] = await Promise.all([client.incr('k'), copy.ping()]);
    const tookMs = Date.now() - frozenAt;
    expect(incremented).toBe(2);
    // down-after 1 s, the promotion, then the reconnect (the hung socket dropped at once)
    expect(tookMs).toBeLessThan(FREEZE_MS - 5000);
    expect((client as Redis).stream.remotePort).toBe(set.replica.port);
    expect(copy.stream.remotePort).toBe(set.replica.port);
    clearTimeout(wake);
    set.master.process.kill('SIGCONT');

    client.disconnect();
    copy.disconnect();
    await expect.poll(listeners, { timeout: 5000 }).toBe(0);
  }, 60_000);
});

describe('a command-line run through the Sentinels', () => {
  it('started while the master hangs, finishes on the new master once the Sentinels promote it: status, and upload enqueuing every row (3 runs)', async () => {
    for (let run = 1; run <= 3; run++) {
      const cli = await startSentinelSet(`cli${run}`, 1, 1000);
      const switched = await watchSwitch(cli);
      const env = baseEnv({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_SENTINELS: cli.seeds, REDIS_SENTINEL_NAME: `cli${run}`, QUEUE_PREFIX: '{cli-switch}' });
      cli.master.process.kill('SIGSTOP');
      const frozenAt = Date.now();
      const wake = setTimeout(() => cli.master.process.kill('SIGCONT'), FREEZE_MS);
      try {
        // both ask the Sentinels now, before their vote: they are given the hung master
        const [status, upload] = await Promise.all([
          runCli(['status', '--json'], env, FREEZE_MS + 10_000),
          runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'S1', '--json'], env, FREEZE_MS + 10_000),
        ]);
        const tookMs = Date.now() - frozenAt;
        const switchMs = (switched.at() ?? NaN) - frozenAt;
        const detail = JSON.stringify({ run, tookMs, switchMs, status, upload });
        expect(status.code, detail).toBe(0);
        expect(upload.code, detail).toBe(0);
        expect(JSON.parse(upload.stdout), detail).toMatchObject({ enqueued: 7 });
        expect(JSON.parse(status.stdout), detail).toBeDefined();
        for (const r of [status, upload]) expect(r.stderr, detail).not.toMatch(/\n\s+at |cannot reach/i);
        // down-after 1 s, the promotion, then the reconnect: long before the old master wakes,
        // and soon after the switch (0.5 s here; 2.4 s when the hung socket was ended, not dropped)
        expect(tookMs, detail).toBeLessThan(FREEZE_MS - 5000);
        expect(tookMs - switchMs, detail).toBeLessThan(2000);
        console.log(`[cli-switch] run ${run}: the Sentinels announced the new master ${switchMs} ms into the freeze; status and upload were done ${tookMs} ms into it`);
        // the rows are on the new master
        const promoted = cli.replica.client();
        expect(await promoted.call('ROLE').then((r) => (r as string[])[0]), detail).toBe('master');
        expect(await promoted.zcard(uploadIndexKey(namespaceOf('{cli-switch}'))), detail).toBe(1);
      } finally {
        clearTimeout(wake);
        switched.stop();
        cli.master.process.kill('SIGCONT');
        await cli.stop();
      }
    }
  }, 5 * 60_000);
});
