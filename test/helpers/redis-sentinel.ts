/** A master, a replica and Sentinels, as real redis-server processes on free ports (tests only). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, startRedis, type TestRedis } from './redis-server.js';

export interface SentinelSet {
  master: TestRedis;
  replica: TestRedis;
  sentinels: Array<{ port: number; child: ChildProcess }>;
  /** REDIS_SENTINELS for the set. */
  seeds: string;
  /** A client of the first Sentinel. */
  sentinelClient(): Redis;
  stop(): Promise<void>;
}

export async function startSentinelSet(name = 'mymaster', count = 1, downAfterMs = 1000): Promise<SentinelSet> {
  // no 5 s wait before the first (diskless) sync
  const master = await startRedis(['--repl-diskless-sync-delay', '0']);
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port), '--repl-diskless-sync-delay', '0']);
  const dir = mkdtempSync(join(tmpdir(), 'bulk-register-sentinel-'));
  const sentinels: Array<{ port: number; child: ChildProcess }> = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    const conf = join(dir, `sentinel-${i}.conf`);
    writeFileSync(conf, [
      `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
      // a leader vote that splits is retried after twice this: 10 s with 5000 (a run's recovery took
      // 14.5 s so, its workers asking the Sentinels in vain meanwhile); the failover itself takes well under it here
      `sentinel failover-timeout ${name} 2000`,
    ].join('\n'));
    const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    sentinels.push({ port, child });
  }
  // ready when the replica is in sync and each Sentinel knows the master, its replica and the
  // other Sentinels. Sentinels find each other through the master (a hello every 2 s); one that
  // does not yet know the others when the master dies may lose the vote for a leader, and a
  // failed failover is retried only after twice failover-timeout (one fault run took 14.3 s so, with 5000)
  const deadline = Date.now() + 20_000;
  const r = replica.client();
  while (!(await r.info('replication')).includes('master_link_status:up')) {
    if (Date.now() > deadline) throw new Error('the replica did not sync within 20 s');
    await new Promise((res) => setTimeout(res, 50));
  }
  for (const s of sentinels) {
    const c = new Redis({ port: s.port, lazyConnect: true, retryStrategy: () => 100 });
    c.on('error', () => undefined);
    for (;;) {
      const replicas = await c.call('SENTINEL', 'REPLICAS', name).catch(() => []) as unknown[];
      const others = await c.call('SENTINEL', 'SENTINELS', name).catch(() => []) as unknown[];
      if (replicas.length > 0 && others.length >= count - 1) break;
      if (Date.now() > deadline) throw new Error('the Sentinels did not see the replica and each other within 20 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    c.disconnect();
  }
  return {
    master, replica, sentinels, seeds: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
    sentinelClient() {
      const c = new Redis({ port: sentinels[0]!.port });
      c.on('error', () => undefined);
      return c;
    },
    async stop() {
      for (const s of sentinels) s.child.kill('SIGKILL');
      await replica.stop().catch(() => undefined);
      await master.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * When the Sentinels announced a new master (`+switch-master`, the earliest of all of
 * them), from the moment this resolves: how long the Sentinels' own failover took, vote
 * included, apart from how long the pool took to follow it.
 */
export async function watchSwitch(set: SentinelSet): Promise<{ at(): number | undefined; stop(): void }> {
  let at: number | undefined;
  const subs = set.sentinels.map((s) => {
    const c = new Redis({ port: s.port, lazyConnect: true, retryStrategy: () => 100 });
    c.on('error', () => undefined);
    c.on('message', (channel: string) => {
      if (channel === '+switch-master' && at === undefined) at = Date.now();
    });
    return c;
  });
  await Promise.all(subs.map(async (c) => {
    await c.connect();
    await c.subscribe('+switch-master');
  }));
  return { at: () => at, stop: () => subs.forEach((c) => c.disconnect()) };
}

