/**
 * many-sellers: 1,000 sellers x 5 rows uploaded at once, far under every seller's
 * rule, so nothing is throttled and the figure is the limiter's cost: rows per
 * second against bare BullMQ (no limiter) on the same pool and Redis.
 */
import { Queue } from 'bullmq';
import { QUEUE_NAME } from '../../src/keys.js';
import { QueueSet, type RegistrationJob } from '../../src/queue.js';
import { shardPrefixes } from '../../src/queue-shards.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';
import type { LimiterKind } from '../alt-limiters.js';
import { Bench, ROUNDS, commandCalls, cpuMs, round, say, scenario, sheetOf, type Ctx, type ScenarioResult } from '../harness.js';

/** BENCH_QUEUE_SHARDS: the limiter's rows go to that many queue shards (bare BullMQ stays on one queue). */
export const SHARDS = Number(process.env.BENCH_QUEUE_SHARDS ?? 1);

export type ManySellersRun = { result: ScenarioResult; rowsPerSecond: number; cpu: { workers: number; redis: number } };

/** The queues a shard list names, on the bench's connection. */
export function queuesOn(ctx: Ctx, prefixes: string[]): QueueSet {
  return new QueueSet(prefixes, (prefix) => new Queue<RegistrationJob>(QUEUE_NAME, { connection: ctx.redis as never, prefix }));
}

/**
 * One run of `count` sellers x 5 rows of `kind` (sellers `{kind}--{tag}{i}`), enqueued
 * on `queues` (default: BENCH_QUEUE_SHARDS shards for a limiter, the pool's one
 * queue for bare BullMQ); its rows/s runs from the first upload to the last registration.
 */
export async function manySellers(
  bench: Bench, kind: LimiterKind | 'none', ctx: Ctx, tag = 'm', count = 1000, queuesFor?: QueueSet,
): Promise<ManySellersRun> {
  const { config, redis, queue } = ctx;
  const sellers = Array.from({ length: count }, (_, i) => `${kind}--${tag}${i}`);
  const before = await commandCalls(redis);
  const cpu0 = { workers: cpuMs(bench.workerPids), redis: cpuMs(bench.redisPids) };
  // with BENCH_QUEUE_SHARDS, the limiter's ratio to bare against a run without shards is the cost of sharding
  const queues = queuesFor ?? (SHARDS > 1 && kind !== 'none' ? queuesOn(ctx, shardPrefixes(config.queuePrefix, SHARDS)) : QueueSet.of(queue));
  const started = Date.now();
  for (let i = 0; i < sellers.length; i += 50) {
    await Promise.all(sellers.slice(i, i + 50).map((s) => enqueueUpload({ redis, queues, config, now: Date.now }, s, sheetOf(s, 5))));
  }
  if (process.env.BENCH_DEBUG) {
    // whether the pool kept pace with the producer: on a cluster's shards it does, and the
    // run's time is the enqueue's, slowed by the workers' CPU (one queue: 0.5 s, 300 rows
    // registered by then; 6 shards: 2-3 s, 2,200-2,400)
    const stats = sellers.map((s) => bench.api.sellerStats(s));
    const registered = stats.reduce((n, s) => n + (s?.registered ?? 0), 0);
    const first = Math.min(...stats.flatMap((s) => s?.times ?? []));
    say(`    enqueued ${count} uploads in ${Date.now() - started} ms; ${registered} rows registered by then, the first ${Number.isFinite(first) ? `${first - started} ms` : 'not yet'} after the first upload`);
  }
  await bench.waitRegistered(Object.fromEntries(sellers.map((s) => [s, 5])));
  const cpu = { workers: (cpuMs(bench.workerPids) - cpu0.workers) / (count * 5), redis: (cpuMs(bench.redisPids) - cpu0.redis) / (count * 5) };
  const mine = sellers.map((s) => bench.api.sellerStats(s)!);
  const last = Math.max(...mine.map((s) => Math.max(...s.times)));
  const rows = count * 5;
  const rowsPerSecond = rows / ((last - started) / 1000);
  const calls = sellers.reduce((n, s) => n + bench.count('permit', s), 0);
  const ahead = sellers.reduce((n, s) => n + bench.count('permitAhead', s), 0);
  const delays = sellers.reduce((n, s) => n + bench.count('delayed', s), 0);
  return {
    rowsPerSecond, cpu,
    result: scenario({
      name: 'many-sellers', limiter: kind, rows, sellers: 1000,
      registered: mine.reduce((n, s) => n + s.registered, 0), tooMany: mine.reduce((n, s) => n + s.tooMany, 0),
      maxInWindow: Math.max(...mine.map((s) => s.maxArrivalsInWindow)), limiterCallsPerRow: kind === 'none' ? null : round(calls / rows),
      delaysPerRow: kind === 'none' ? null : round(delays / rows),
      ...(kind === 'none' ? {} : { ownAsksPerRow: round((calls - ahead) / rows) }),
      redisCommandsPerRow: round(((await commandCalls(redis)) - before) / rows, 1),
    }),
  };
}

/**
 * many-sellers on one warm pool. Every limiter run is bracketed by bare BullMQ
 * runs (no limiter): bare, then default and bare in turn (BENCH_ROUNDS times, 2
 * unless set), each comparison, bare.
 * A run's throughput ratio is its rows per second ÷ the mean of the bare runs
 * just before and just after it, so the machine's drift over the sequence (it
 * speeds up as the processes warm, and it wanders) mostly cancels out; the
 * default's ratio is the mean of its two runs' ratios.
 */
export function describeRun(i: number, kind: LimiterKind | 'none', run: ManySellersRun): string {
  return `${i + 1}. ${kind === 'none' ? 'bare' : kind} ${run.rowsPerSecond.toFixed(0)} rows/s (CPU per row: ${run.cpu.workers.toFixed(2)} ms workers, ${run.cpu.redis.toFixed(2)} ms Redis)`;
}

export async function throughputSequence(bench: Bench, kinds: LimiterKind[], ctx: Ctx): Promise<{ results: ScenarioResult[]; note: string }> {
  for (const k of ['none', ...kinds] as const) await manySellers(bench, k, ctx, 'warm', 150);
  const others = kinds.filter((k) => k !== 'sliding-window');
  const sequence: Array<LimiterKind | 'none'> = [
    'none',
    ...(kinds.includes('sliding-window') ? Array.from({ length: ROUNDS }, () => ['sliding-window', 'none'] as const).flat() : []),
    ...others, ...(others.length > 0 ? (['none'] as const) : []),
  ];
  const runs: Array<{ kind: LimiterKind | 'none'; run: ManySellersRun }> = [];
  for (const [i, kind] of sequence.entries()) {
    const run = await manySellers(bench, kind, ctx, `s${i}-`);
    runs.push({ kind, run });
    say(`  ${describeRun(i, kind, run)}`);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const bareAround = (i: number) => {
    const before = runs.slice(0, i).reverse().find((r) => r.kind === 'none')!;
    const after = runs.slice(i + 1).find((r) => r.kind === 'none')!;
    return mean([before.run.rowsPerSecond, after.run.rowsPerSecond]);
  };
  const results: ScenarioResult[] = [];
  for (const k of kinds) {
    const mine = runs.map((r, i) => ({ ...r, i })).filter((r) => r.kind === k);
    if (mine.length === 0) continue;
    const ratios = mine.map((r) => r.run.rowsPerSecond / bareAround(r.i));
    results.push({ ...mine[0]!.run.result, throughputRatio: round(mean(ratios)) });
  }
  const note = `The runs, in order: ${runs.map(({ kind, run }, i) => describeRun(i, kind, run)).join('; ')}`;
  return { results, note };
}
