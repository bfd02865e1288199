/**
 * What a script call costs the calling process through ioredis's Cluster client
 * against a plain connection to the same master: `node dist/bench/cluster-client.js`
 * after a build. A private 3-master cluster; the count's script (lua/complete-send.lua,
 * nothing counted) sent CALLS times on each connection, one at a time and 16 at a
 * time, in CLUSTER_CLIENT_ROUNDS interleaved rounds (default 3). Prints the process's
 * CPU per call (user + system), the figure docs/operations.md quotes for the cluster.
 */
import { Cluster, Redis } from 'ioredis';
import { startCluster } from '../src/dev/redis-cluster.js';
import { keySlot } from '../src/queue-shards.js';
import { defineCommands } from '../src/lua-commands.js';
import type { RedisClient } from '../src/redis.js';

const CALLS = 20_000;
const ROUNDS = Math.max(1, Number(process.env.CLUSTER_CLIENT_ROUNDS ?? 3) || 3);

async function cpuPerCall(client: RedisClient, together: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i += together) {
    await Promise.all(Array.from({ length: together }, (_, j) => client.completeSend(
      '{t}:plan', '{t}:sent', '{t}:upload', '{t}:rows', '{t}:lag', '{t}:rule', '{t}:blocked',
      `u:${i + j}`, '', i + j, '', '', 50, 2000, 100, 3600, 0, -1, 0, 0, 0, 10_000,
    )));
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

const cluster = await startCluster();
const viaCluster = defineCommands(new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }))));
try {
  // the client knows the slots once connected: the plain connection goes to the master of the keys' slot
  await viaCluster.get('{t}:plan');
  const [host, port] = viaCluster.slots[keySlot('{t}:plan')]![0]!.split(':');
  const plain = defineCommands(new Redis({ host, port: Number(port) })) as RedisClient;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const together of [1, 16]) {
        const c = await cpuPerCall(viaCluster, together);
        const p = await cpuPerCall(plain, together);
        console.log(`round ${round}, ${together} at a time: ${c.toFixed(1)} µs of CPU per call through the Cluster client, ${p.toFixed(1)} through a plain connection`);
      }
    }
  } finally {
    plain.disconnect();
  }
} finally {
  viaCluster.disconnect();
  await cluster.stop();
}
