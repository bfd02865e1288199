/** Real Redis Clusters on free ports, for the cluster tests: 3 masters (src/dev/redis-cluster.ts), or 3 masters with a replica each. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../../src/dev/redis-server.js';
import type { TestCluster } from '../../src/dev/redis-cluster.js';

export { startCluster, type TestCluster } from '../../src/dev/redis-cluster.js';

const run = promisify(execFile);

export interface ReplicatedCluster extends TestCluster {
  /** The master node serving `key`'s slot now, and its replica. */
  shardOf(key: string): Promise<{ master: RedisServer; replica: RedisServer }>;
}

/** 3 masters with one replica each (6 redis-server processes), replicas in sync. */
export async function startReplicatedCluster(nodeTimeoutMs = 2000): Promise<ReplicatedCluster> {
  const nodes: RedisServer[] = [];
  for (let i = 0; i < 6; i++) {
    nodes.push(await startRedisServer([
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(nodeTimeoutMs),
      '--repl-diskless-sync-delay', '0', '--appendonly', 'no', '--save', '',
    ]));
  }
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']);
  const byPort = new Map(nodes.map((n) => [n.port, n]));
  const deadline = Date.now() + 30_000;
  for (const n of nodes) {
    const c = new Redis({ port: n.port, host: '127.0.0.1' });
    try {
      for (;;) {
        const info = String(await c.cluster('INFO'));
        const repl = await c.info('replication');
        const synced = /role:master/.test(repl) || /master_link_status:up/.test(repl);
        if (/cluster_state:ok/.test(info) && synced) break;
        if (Date.now() > deadline) throw new Error('the test cluster did not become ready');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      c.disconnect();
    }
  }
  const alive = nodes.filter((n) => n.process.exitCode === null);
  return {
    nodes,
    seeds: addresses.join(','),
    async shardOf(key) {
      const probe = new Redis({ port: alive[0]!.port, host: '127.0.0.1' });
      const port = (f: string[]) => Number(f[1]!.split('@')[0]!.split(':')[1]);
      try {
        const slot = Number(await probe.cluster('KEYSLOT', key));
        // the probe learns of each replica's master by gossip, a moment after the
        // replica itself is in sync: ask again until it knows
        const until = Date.now() + 15_000;
        for (;;) {
          const lines = String(await probe.cluster('NODES')).trim().split('\n').map((l) => l.split(' '));
          const master = lines.find((f) => f[2]!.includes('master') && !f[2]!.includes('fail') && f.slice(8).some((r) => {
            const [a, b] = r.split('-').map(Number);
            return slot >= a! && slot <= (b ?? a!);
          }));
          const replica = master && lines.find((f) => f[3] === master[0]);
          if (master && replica) return { master: byPort.get(port(master))!, replica: byPort.get(port(replica))! };
          if (Date.now() > until) throw new Error(`the test cluster shows no master with a replica for slot ${slot}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        probe.disconnect();
      }
    },
    async stop() {
      for (const n of nodes) {
        try { n.process.kill('SIGCONT'); } catch { /* gone */ }
        await n.stop();
      }
    },
  };
}
