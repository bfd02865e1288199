/**
 * Lossy failovers on Redis Cluster (3 masters, 1 replica each, node timeout
 * 2 s), rule 50 per 10 s so that the window outlasts the failover. The replica
 * of the chosen master is frozen for 1 s, so that it falls behind, then the
 * master is SIGKILLed and the replica promoted with what it had:
 * - the master holding a seller's queue shard, where the seller is pinned
 *   (src/seller-home.ts): its jobs, limiter records and upload counters;
 * - the master holding a seller's pin only (not its shard).
 * Asserted over the runs: every upload done, with counts equal to what the API
 * registered; no 429; nothing registered twice; no enqueued row lost; and a
 * SIGTERM afterwards stops the whole pool within its drain bound. When the
 * master with a seller's shard lost a grant, only the sellers on that master
 * pause for a window: none of them registers during the pause, and a seller on
 * another master does.
 *
 * Each case has a file of its own (cluster-seller-master.ha.test.ts,
 * cluster-pin-master.ha.test.ts), so that the failure suite's two files at a
 * time share the work evenly.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { startReplicatedCluster } from '../helpers/redis-cluster.js';
import { shardPrefixes } from '../../src/queue-shards.js';
import { IN_FLIGHT_MS, SELLERS, cleanUp, loggedPause, pinOnePerMaster, runCase, summary, type RunResult, type Stage } from './harness.js';

const RUNS = Number(process.env.HA_CLUSTER_RUNS ?? 3);
const SHUTDOWN_MS = 5000;
const results: Record<string, RunResult[]> = { 'cluster-seller-master': [], 'cluster-pin-master': [] };
/** A pause of one master's sellers, as the pool logged it, and the sellers on either side of it. */
interface Pause { loggedAt: number; until: number; paused: string[]; others: string[] }
const pauses: Array<Pause & { pausedDuring: number; othersDuring: number }> = [];

afterAll(() => {
  for (const rs of Object.values(results)) if (rs.length) console.log(`[ha] ${summary(rs)}, stop ${Math.max(...rs.map((r) => r.stopMs ?? -1))} ms at most, left running ${Math.max(...rs.map((r) => r.leftRunning ?? -1))}`);
  cleanUp();
});

const offset = async (c: Redis) => Number(/master_repl_offset:(\d+)/.exec(await c.info('replication'))?.[1] ?? 0);

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** SIGTERM to the pool: how long it took to exit, and its processes (supervisor and workers) alive 20 s later. */
async function stopPool(stage: Stage): Promise<Partial<RunResult>> {
  const pid = stage.pool.child.pid!;
  const workers = execFileSync('ps', ['-eo', 'pid=,ppid=']).toString().trim().split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number)).filter(([, ppid]) => ppid === pid).map(([p]) => p!);
  const started = Date.now();
  stage.pool.child.kill('SIGTERM');
  const exited = await Promise.race([stage.pool.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))]);
  const stopMs = exited ? Date.now() - started : -1;
  await new Promise((r) => setTimeout(r, 500));
  return { stopMs, leftRunning: workers.filter(isAlive).length + (isAlive(pid) ? 1 : 0) };
}

export function describeClusterFailover(target: 'seller' | 'pin'): void {
  const name = `cluster-${target}-master`;
  describe(`a lossy failover of the master holding ${target === 'seller' ? "a seller's shard (its jobs and keys)" : "a seller's pin (not its shard)"}`, () => {
    it(`leaves every upload done with the API's counts, no 429, none twice, and a pool that stops (${RUNS} runs)`, async () => {
      for (let run = 1; run <= RUNS; run++) {
        const cluster = await startReplicatedCluster();
        try {
          // the default on 3 masters: 6 queue shards, 2 per master
          const prefixes = shardPrefixes(`{ha-${name}-${run}}`, 6);
          let lostBytes = 0;
          // the sellers whose shard (keys and jobs) is on the failed master, and the others
          const failedSide: string[] = [];
          const otherSide: string[] = [];
          const pins = new Map<string, string>();
          const r = await runCase(name, run, { REDIS_CLUSTER_NODES: cluster.seeds }, async () => {
            // fail a seller's shard's master, or the master of its pin where that is another one
            const shardOfSeller = (seller: string) => cluster.shardOf(`${pins.get(seller)!}:registrations:wait`);
            let shard: Awaited<ReturnType<typeof cluster.shardOf>> | undefined;
            for (const seller of SELLERS) {
              const pin = await cluster.shardOf(`{${seller}}`);
              const queue = await shardOfSeller(seller);
              if (target === 'seller' || pin.master !== queue.master) {
                shard = target === 'seller' ? queue : pin;
                break;
              }
            }
            if (!shard) throw new Error('every seller\'s pin shares its shard\'s master: no such case in this run');
            for (const seller of SELLERS) ((await shardOfSeller(seller)).master === shard.master ? failedSide : otherSide).push(seller);
            // the replica stops and its link is cut: what the master writes from now on it never gets
            const master = new Redis({ port: shard.master.port, lazyConnect: true });
            master.on('error', () => undefined);
            await master.connect();
            shard.replica.process.kill('SIGSTOP');
            await master.call('CLIENT', 'KILL', 'TYPE', 'replica');
            const cutAt = await offset(master);
            await new Promise((res) => setTimeout(res, 1000));
            lostBytes = (await offset(master)) - cutAt;
            shard.master.process.kill('SIGKILL');
            const faultAt = Date.now();
            master.disconnect();
            shard.replica.process.kill('SIGCONT');
            return faultAt;
          }, {
            env: { RATE_LIMIT_WINDOW_MS: '10000', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_MS) },
            // H1..H3 hash to shards of one master: pinned one per master instead (shards 0, 2 and 4),
            // as a pool's many sellers spread, so that a failed master has sellers on either side
            beforeUploads: () => pinOnePerMaster(cluster.nodes[0]!.port, `{ha-${name}-${run}}`, prefixes, pins),
            afterDone: async (stage) => {
              const pause = loggedPause(stage.pool.output(), 'its sellers send nothing until a whole window has passed');
              if (pause && target === 'seller') {
                const times = (await stage.stats()).sellers;
                const during = (sellers: string[], from: number) => sellers.reduce((n, x) => n + (times[x]?.times ?? []).filter((t) => t > from && t < pause.until - 500).length, 0);
                pauses.push({ ...pause, paused: failedSide, others: otherSide, pausedDuring: during(failedSide, pause.loggedAt + IN_FLIGHT_MS), othersDuring: during(otherSide, pause.loggedAt) });
              }
              return stopPool(stage);
            },
          });
          r.note = `the master wrote ${lostBytes} bytes its replica never had`;
          results[name]!.push(r);
          expect(lostBytes, 'the fault lost writes').toBeGreaterThan(0);
        } finally {
          await cluster.stop();
        }
      }
      if (target === 'seller') {
        console.log(`[ha] per-master pauses: ${JSON.stringify(pauses)}`);
        expect(pauses.length, 'no run lost a grant: the pause was never exercised').toBeGreaterThan(0);
        for (const p of pauses) {
          expect(p.pausedDuring, JSON.stringify(p)).toBe(0);
          expect(p.othersDuring, JSON.stringify(p)).toBeGreaterThan(0);
        }
      }
      for (const r of results[name]!) {
        expect(r, JSON.stringify(r)).toMatchObject({ lost: 0, twice: 0, tooMany: 0, countMismatch: 0, leftRunning: 0 });
        expect(r.stopMs, JSON.stringify(r)).toBeGreaterThanOrEqual(0);
        expect(r.stopMs, JSON.stringify(r)).toBeLessThanOrEqual(SHUTDOWN_MS + 2000);
      }
    }, 30 * 60_000);
  });
}

