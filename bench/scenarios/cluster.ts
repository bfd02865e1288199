/**
 * many-sellers on a 3-master Redis Cluster (`BENCH_SCENARIOS=cluster`, or `npm
 * run bench:cluster`; not in the default run, which it would take past 10
 * minutes). The same pool of 16 processes and mock API as many-sellers, on a
 * private cluster, with QUEUE_SHARDS left to its cluster default.
 *
 * Rounds of three runs: bare BullMQ on one queue (what a user who never heard of
 * shards runs), bare BullMQ on the default shards, and the default limiter on
 * them. Each limiter run's ratio divides by the bare runs on the same shards
 * just before and after it, so it is the limiter's own cost on a cluster; its
 * ratio to one queue shows what the shards give back. Short runs on a 2-core
 * host swing: in one sitting of 5 rounds the runs' ratios went from 0.74 to
 * 1.02, so the figure is the median of CLUSTER_ROUNDS runs' ratios (5 unless
 * BENCH_CLUSTER_ROUNDS says otherwise), each run's ratio beside it. The sellers are pinned to their
 * shards (src/seller-home.ts), so a permit rides in BullMQ's completion as on a
 * single Redis: the run records limiter calls per row, the permits asked in a
 * round trip of their own, and each master's share of the commands.
 */
import { startCluster } from '../../src/dev/redis-cluster.js';
import { freePort } from '../../src/dev/redis-server.js';
import { MockRegistrationApi } from '../../src/mock-api/server.js';
import { QueueSet, resolveShardPrefixes } from '../../src/queue.js';
import { Bench, RULE, callsPerNode, median, redisNodes, round, say, type ScenarioResult } from '../harness.js';
import { describeRun, manySellers, queuesOn, type ManySellersRun } from './many-sellers.js';

const SELLERS = 500;
/** BENCH_CLUSTER_ROUNDS: rounds of the three runs (5). */
const CLUSTER_ROUNDS = Math.max(1, Number(process.env.BENCH_CLUSTER_ROUNDS ?? 5) || 5);

export async function clusterSequence(): Promise<ScenarioResult[]> {
  const cluster = await startCluster();
  const api = new MockRegistrationApi({ limit: RULE.limit, windowMs: RULE.windowMs, latencyMs: { min: 2, max: 25 } });
  const port = await api.listen(await freePort());
  const bench = new Bench(api, '', `http://127.0.0.1:${port}`, { REDIS_CLUSTER_NODES: cluster.seeds });
  try {
    return await bench.withPool('by-seller', async (ctx) => {
      const prefixes = resolveShardPrefixes(ctx.config, ctx.redis as never);
      const shards = queuesOn(ctx, prefixes);
      const one = QueueSet.of(ctx.queue);
      say(`bench: many-sellers on a 3-master cluster, ${prefixes.length} queue shards (the cluster default), ${SELLERS} sellers x 5 rows a run ...`);
      // Full-size warm-ups on each measured path: V8 optimises a function only after many calls,
      // and 150 sellers' rows (47 a process) left the first measured runs paying for it. Two
      // runs each, interleaved: the default's runs 0.843 / 0.66 and 0.881 / 0.726 of bare on
      // the shards after 150-seller warm-ups, 0.884 / 0.94 and 0.866 / 0.913 after these
      await manySellers(bench, 'none', ctx, 'warm', SELLERS, one);
      await manySellers(bench, 'none', ctx, 'warm-s', SELLERS, shards);
      await manySellers(bench, 'sliding-window', ctx, 'warm', SELLERS, shards);
      type Kind = 'bare-one-queue' | 'bare-shards' | 'sliding-window';
      const runs: Array<{ kind: Kind; run: ManySellersRun; spread?: number[] }> = [];
      const sequence: Kind[] = ['bare-one-queue', 'bare-shards', ...Array.from({ length: CLUSTER_ROUNDS }, () => ['sliding-window', 'bare-one-queue', 'bare-shards'] as Kind[]).flat()];
      for (const [i, kind] of sequence.entries()) {
        const before = await callsPerNode(ctx.redis);
        const started = Date.now();
        const run = await manySellers(bench, kind === 'sliding-window' ? 'sliding-window' : 'none', ctx, `c${i}-`, SELLERS, kind === 'bare-one-queue' ? one : shards);
        const after = await callsPerNode(ctx.redis);
        // BENCH_DEBUG: the run's time, for a worker profile's samples (BENCH_WORKER_PROF)
        if (process.env.BENCH_DEBUG) say(`    run (ms since the epoch) ${kind} ${started}-${Date.now()}`);
        const used = after.map((n, k) => n - before[k]!);
        const mean = used.reduce((a, b) => a + b, 0) / used.length;
        const spread = used.map((n) => round(n / mean, 2));
        runs.push({ kind, run, spread });
        say(`  ${describeRun(i, kind === 'sliding-window' ? kind : 'none', run).replace('bare', kind)}; masters' shares of the commands ${spread.join(' / ')}`);
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const around = (i: number, kind: Kind) => mean([
        runs.slice(0, i).reverse().find((r) => r.kind === kind)!.run.rowsPerSecond,
        runs.slice(i + 1).find((r) => r.kind === kind)!.run.rowsPerSecond,
      ]);
      const mine = runs.map((r, i) => ({ ...r, i })).filter((r) => r.kind === 'sliding-window');
      const bareOf = (kind: Kind) => runs.filter((r) => r.kind === kind);
      const result = (limiter: ScenarioResult['limiter'], rs: typeof runs, queueShards: number, extra: Partial<ScenarioResult>): ScenarioResult => ({
        ...rs[0]!.run.result,
        name: 'many-sellers-cluster',
        limiter,
        sellers: SELLERS,
        rowsPerSec: round(mean(rs.map((r) => r.run.rowsPerSecond)), 1),
        redisCpuUsPerRow: round(mean(rs.map((r) => r.run.cpu.redis * 1000)), 1),
        masters: redisNodes(ctx.redis).length,
        queueShards,
        masterShares: rs.at(-1)!.spread,
        ...extra,
      });
      const ratios = mine.map((r) => round(r.run.rowsPerSecond / around(r.i, 'bare-shards')));
      const throughputRatio = median(ratios);
      const ownAsksPerRow = round(mean(mine.map((r) => r.run.result.ownAsksPerRow ?? 0)));
      say(`  sliding-window on the shards: ${throughputRatio} of bare on them (median; runs ${ratios.join(', ')}), ${ownAsksPerRow} permits asked in a round trip of their own per row`);
      return [
        result('sliding-window', mine, prefixes.length, {
          throughputRatio,
          runRatios: ratios,
          throughputRatioOneQueue: median(mine.map((r) => round(r.run.rowsPerSecond / around(r.i, 'bare-one-queue')))),
          limiterCallsPerRow: round(mean(mine.map((r) => r.run.result.limiterCallsPerRow!))),
          ownAsksPerRow,
          redisCommandsPerRow: round(mean(mine.map((r) => r.run.result.redisCommandsPerRow!)), 1),
        }),
        result('bare', bareOf('bare-shards'), prefixes.length, { throughputRatio: 1 }),
        result('bare', bareOf('bare-one-queue'), 1, {
          throughputRatio: round(mean(bareOf('bare-one-queue').map((r) => r.run.rowsPerSecond)) / mean(bareOf('bare-shards').map((r) => r.run.rowsPerSecond))),
        }),
      ];
    });
  } finally {
    await api.close();
    await cluster.stop();
  }
}
