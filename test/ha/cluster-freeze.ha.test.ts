/**
 * A frozen master on Redis Cluster (3 masters, 1 replica each, node timeout
 * 2 s), rule 50 per 10 s. The master holding a seller's queue shard is stopped
 * (SIGSTOP) for 12 s while uploads are being registered: the cluster promotes
 * its replica meanwhile, and the old master, once resumed, learns it is a
 * replica. Its TCP connections stay open while it hangs. Asserted over the
 * runs: every upload done, with counts equal to what the API registered; no
 * 429; nothing registered twice; no enqueued row lost; and the frozen master's
 * seller registers again before that master resumes (the pool follows the
 * promotion instead of waiting on the old master).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startReplicatedCluster } from '../helpers/redis-cluster.js';
import { shardPrefixes } from '../../src/queue-shards.js';
import { IN_FLIGHT_MS, SELLERS, cleanUp, pinOnePerMaster, runCase, summary, type RunResult } from './harness.js';

const RUNS = Number(process.env.HA_CLUSTER_RUNS ?? 3);
const FREEZE_MS = Number(process.env.HA_FREEZE_MS ?? 12_000);
/** The frozen master's seller: its first registration after the freeze began (ms), by run. */
const resumed: number[] = [];
const results: RunResult[] = [];
afterAll(() => {
  if (results.length) console.log(`[ha] ${summary(results)}`);
  cleanUp();
});

describe('a master of Redis Cluster frozen past its node timeout', () => {
  it(`leaves every upload done with the API's counts, no 429, none twice, and its seller going on before it resumes (${RUNS} runs)`, async () => {
    for (let run = 1; run <= RUNS; run++) {
      const cluster = await startReplicatedCluster();
      let frozen: number | undefined;
      let faultAt = 0;
      try {
        const name = 'cluster-freeze';
        const prefixes = shardPrefixes(`{ha-${name}-${run}}`, 6);
        const pins = new Map<string, string>();
        const r = await runCase(name, run, { REDIS_CLUSTER_NODES: cluster.seeds }, async () => {
          const shard = await cluster.shardOf(`${pins.get(SELLERS[0]!)!}:registrations:wait`);
          frozen = shard.master.process.pid;
          shard.master.process.kill('SIGSTOP');
          faultAt = Date.now();
          await new Promise((res) => setTimeout(res, FREEZE_MS));
          shard.master.process.kill('SIGCONT');
          frozen = undefined;
          return faultAt;
        }, {
          env: { RATE_LIMIT_WINDOW_MS: '10000' },
          // the first registration after the fault of a seller pinned where the first is, on the
          // frozen master (recoveryMs is any seller's): with many sellers (HA_SELLERS) the first
          // is often done before the fault
          afterDone: async (stage) => {
            const sellers = (await stage.stats()).sellers;
            const times = SELLERS.filter((s) => pins.get(s) === pins.get(SELLERS[0]!)).flatMap((s) => sellers[s]?.times ?? []);
            const next = Math.min(...times.filter((t) => t >= faultAt + IN_FLIGHT_MS));
            resumed.push(Number.isFinite(next) ? next - faultAt : -1);
            return { note: `the frozen master's sellers registered again ${resumed.at(-1)} ms after the freeze began` };
          },
          // one seller per master (shards 0, 2 and 4), as in cluster-failover-case.ts
          beforeUploads: () => pinOnePerMaster(cluster.nodes[0]!.port, `{ha-${name}-${run}}`, prefixes, pins),
        });
        results.push(r);
      } finally {
        if (frozen) process.kill(frozen, 'SIGCONT');
        await cluster.stop();
      }
    }
    for (const r of results) expect(r, JSON.stringify(r)).toMatchObject({ lost: 0, twice: 0, tooMany: 0, countMismatch: 0 });
    for (const ms of resumed) {
      expect(ms).toBeGreaterThan(0);
      expect(ms, 'the frozen master\'s seller waited for that master to resume').toBeLessThan(FREEZE_MS);
    }
  }, 30 * 60_000);
});
