/**
 * A private 3-master Redis Cluster on free ports (no replicas), for the cluster
 * tests and the bench's cluster scenario.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from './redis-server.js';

const run = promisify(execFile);

export interface TestCluster {
  nodes: RedisServer[];
  /** REDIS_CLUSTER_NODES */
  seeds: string;
  stop(): Promise<void>;
}

export async function startCluster(): Promise<TestCluster> {
  const nodes: RedisServer[] = [];
  for (let i = 0; i < 3; i++) {
    nodes.push(await startRedisServer(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000']));
  }
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
  const deadline = Date.now() + 20_000;
  for (const n of nodes) {
    const c = new Redis({ port: n.port, host: '127.0.0.1' });
    try {
      for (;;) {
        const info = await c.cluster('INFO');
        if (/cluster_state:ok/.test(String(info))) break;
        if (Date.now() > deadline) throw new Error('the test cluster did not become ready');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      c.disconnect();
    }
  }
  return {
    nodes,
    seeds: addresses.join(','),
    async stop() {
      for (const n of nodes) await n.stop();
    },
  };
}
