/**
 * The capacity scenario over every limiter, in one run: a pool of its own at the
 * default concurrency against a mock API at 150-250 ms. The default limiter runs
 * CAPACITY_REPEATS times, each run paired with one of rate-limiter-flexible (the
 * peer it is compared with figure by figure; every other pair in the other order),
 * beside bare BullMQ runs, and every
 * ratio divides by the mean of the bare runs. For both, rows/s, ratios, Redis costs,
 * first registrations and the small seller are each the median of their runs, the
 * spans, ramp and RSS those of their median run by Redis's cost, and every run is
 * listed with them: one run's ratio moves by a tenth or
 * more on this 2-core machine. Bare BullMQ and a plain BullMQ + axios pool at a
 * fixed concurrency (the most the default had in flight) run on pools of their own,
 * open beside the default's, one run each after each pair. BullMQ's own limiter is queue-wide, so it gets a pool of
 * its own (the same processes and concurrency, with the Worker's `limiter`
 * option) and a time limit: at L per W for the whole queue it would need 200 s
 * for these rows. The other peers get PEER_TIME_MS each.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../src/dev/redis-server.js';
import { MockRegistrationApi } from '../../src/mock-api/server.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { Bench, PROCESSES, RULE, median, round, say, withRealtimeRedis, type Ctx, type FixedPoolFigures, type ScenarioResult } from '../harness.js';
import { SHARDS } from './many-sellers.js';
import { CAPACITY, capacityRun, idleCommandsPerSec, spanRatios, type CapacityLimiter, type CapacityRun } from './capacity.js';

const versionOf = (pkg: string) => (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

/** BENCH_CONCURRENCY sets WORKER_CONCURRENCY for the capacity pools (default: the product's default). */
const CONCURRENCY_ENV: Record<string, string> = process.env.BENCH_CONCURRENCY ? { WORKER_CONCURRENCY: process.env.BENCH_CONCURRENCY } : {};
/** BENCH_CAPACITY_PEERS: which peers run (comma-separated; default all). */
const PEERS = process.env.BENCH_CAPACITY_PEERS?.split(',');
const BULLMQ_LIMITER_TIME_MS = 12_000;
/**
 * How long a peer's capacity run may take (ms): the slowest carry under 200 rows/s
 * here, and would take the bench past 10 minutes. A run stopped there reports its
 * figures over the rows registered by then (`complete: false`).
 */
const PEER_TIME_MS = 20_000;
/** Finished jobs BullMQ keeps in the capacity pool's queue (see the pool's env). */
const CAPACITY_RETAINED_JOBS = 2000;
/** Runs of the default limiter (BENCH_CAPACITY_REPEATS; default 3), each beside a bare run. */
const CAPACITY_REPEATS = Math.max(1, Number(process.env.BENCH_CAPACITY_REPEATS ?? 3) || 3);
/**
 * Measured runs of each pool at a fixed concurrency (bare BullMQ, plain BullMQ + axios), one
 * after each of the first this many pairs of the default's runs (BENCH_FIXED_RUNS; default: one
 * after every pair).
 */
const FIXED_RUNS = Math.min(CAPACITY_REPEATS, Math.max(1, Number(process.env.BENCH_FIXED_RUNS ?? CAPACITY_REPEATS) || CAPACITY_REPEATS));

export async function capacitySequence(redisUrl: string): Promise<{ results: ScenarioResult[]; idleCommandsPerSec: number; redisScheduling: string }> {
  const api = new MockRegistrationApi({ limit: RULE.limit, windowMs: RULE.windowMs, latencyMs: CAPACITY.latencyMs });
  const port = await api.listen(await freePort());
  const bench = new Bench(api, redisUrl, `http://127.0.0.1:${port}`, CONCURRENCY_ENV);
  const configured = bench.configFor('by-seller').config.workerConcurrency;
  const runs: Array<{ limiter: CapacityLimiter; run: CapacityRun }> = [];
  /** The ramp of a run whose backlog was released at once from paused queues, by limiter. */
  const released = new Map<CapacityLimiter, ScenarioResult['ramp']>();
  const log = (r: CapacityRun, label: string = r.result.limiter) => {
    const x = r.result;
    say(`  capacity ${label}: ${x.registered}/${x.rows} rows, ${x.rowsPerSec} rows/s, 429s ${x.tooMany}, first registration p50/p99/max ${x.firstRegistrationMs!.p50}/${x.firstRegistrationMs!.p99}/${x.firstRegistrationMs!.max} ms, small seller ${x.smallSellerMs ?? '–'} ms, Redis ${x.redisUsecPerRow} µs/row in commands, ${x.redisCpuUsPerRow} µs/row CPU, workers ${x.workerCpuUsPerRow} µs/row CPU, peak RSS ${x.peakRssMb} MB (anonymous ${x.memory?.peakAnonMb} MB, PSS ${x.memory?.peakPssMb} MB; the pool's PSS ${x.memory?.poolPssMb} MB), in flight ${x.concurrency} at most, ${x.meanConcurrency} on average (at the API: ${x.ramp?.workingSize} working, 90 % of it ${x.ramp?.to90Ms ?? '–'} ms after the first arrival)${x.complete ? '' : ' (stopped at the time limit)'}`);
  };
  let idle = 0;
  let redisScheduling = '';
  type FixedPool = { perProcess: number; runs: CapacityRun[] };
  let fixed: FixedPool | undefined;
  let plainPool: FixedPool | undefined;
  try {
    say(`bench: capacity at ${CAPACITY.latencyMs.min}-${CAPACITY.latencyMs.max} ms, ${PROCESSES} processes, WORKER_CONCURRENCY ${configured} ...`);
    await bench.withPool('by-seller', (main) => withRealtimeRedis(bench.redisPids, async (policy) => {
      redisScheduling = policy;
      idle = await idleCommandsPerSec(main);
      say(`  idle pool: ${idle} Redis commands/s`);
      // warm the fresh processes on each measured path before measuring; the measured runs follow
      // without a pause, each right after another run, as a busy pool's rows do (with the idle
      // reading between the warm-up and the sequence, the first bare run cost Redis a fifth less
      // per row than the bare runs that came right after another run)
      // `side`: the run goes to a pool of its own at a fixed concurrency (see below)
      type Side = 'fixed' | 'plain';
      type Entry = { limiter: CapacityLimiter; kind: string; library?: string; release?: boolean; side?: Side };
      const wanted = (s: Entry) => s.side ? PEERS === undefined || PEERS.includes(s.side === 'fixed' ? 'bare-fixed' : 'bare-plain')
        : !PEERS || s.limiter === 'bare' || s.limiter === 'sliding-window' || PEERS.includes(s.limiter);
      const bare: Entry = { limiter: 'bare', kind: 'none' };
      const ours: Entry = { limiter: 'sliding-window', kind: 'sliding-window' };
      const rlf: Entry = { limiter: 'rate-limiter-flexible', kind: 'rate-limiter-flexible', library: `rate-limiter-flexible@${versionOf('rate-limiter-flexible')}` };
      const sides: Entry[] = [{ ...bare, side: 'fixed' }, { ...bare, side: 'plain' }];
      // the most jobs the default had in flight in its measured runs so far (a fresh pool's warm-up
      // took more: 464 against 364 in one sequence)
      let mostInFlight = 0;
      // Each warm-up is a full-size run, as the fixed-size pool below gets: V8 compiles a
      // function's optimised code only after many calls, and 25 sellers' rows (78 a process)
      // left the measured runs paying for it. Quick runs (BENCH_CAPACITY_REPEATS=1, interleaved
      // two and two): the default carried 747 and 647 rows/s at 1,876 and 2,115 µs of worker
      // CPU per row after 25 sellers' warm-up, 884 and 978 at 1,422 and 1,296 after a full-size
      // one; bare BullMQ's first run 851 and 827 against 971 and 1,096.
      for (const s of [bare, ours, rlf].filter(wanted)) await capacityRun(bench, api, main, { limiter: s.limiter, sellerKind: s.kind, tag: 'warm' });
      const sequence = ([
        bare,
        // the default and rate-limiter-flexible (the peer closest to it: one run each read 280 ms
        // apart in first registration, a gap runs of the same limiter span on this machine) in
        // pairs, the second pair the other way round (ABBA): the pool gets cheaper per row from
        // run to run (bare's worker CPU per row fell 1,991 -> 1,675 -> 1,418 µs over one sequence),
        // and with the default always first it paid that in every pair. In two sequences the
        // limiter that ran first in a pair cost the workers 1.25-1.35x the other's CPU per row,
        // whichever it was. A bare run after every second pair and at the end.
        // The pools at a fixed concurrency run one run each after each of the first FIXED_RUNS
        // pairs. Run after the whole sequence, they fell into a slower phase of this host than
        // the runs they were set against (bare BullMQ fixed at 24 jobs a process: 669 and 835
        // rows/s, where the bare runs of the sequence carried 1,031-1,135).
        ...Array.from({ length: CAPACITY_REPEATS }, (_, i) => [
          ...(i % 2 === 0 ? [ours, rlf] : [rlf, ours]), ...(i < FIXED_RUNS ? sides : []),
          ...(i % 2 === 1 || i === CAPACITY_REPEATS - 1 ? [bare] : []),
        ]).flat(),
        // the ramp: a backlog released at once, for bare BullMQ, the default and rate-limiter-flexible
        ...[bare, ours, rlf].map((e) => ({ ...e, release: true })),
        { limiter: 'bottleneck', kind: 'bottleneck', library: `bottleneck@${versionOf('bottleneck')}` },
        { limiter: 'naive', kind: 'naive' },
        { limiter: 'token-bucket', kind: 'token-bucket' },
      ] satisfies Entry[]).filter(wanted);
      let n = 0;
      // Bare BullMQ on a pool of its own, its concurrency fixed at the most the default had in
      // flight (÷ the processes, rounded up), as an acceptance run sizes it; and a plain BullMQ +
      // axios pool (bench/plain-worker.ts) at the same. Each is opened at its first run, beside
      // the default's pool, sized from the default's runs so far, and warmed as that pool was
      // before its first measured run: three full-size runs (a fresh pool is slower per row than
      // one that has carried tens of thousands of rows: bare runs on the default's pool went 640 ->
      // 766 -> 917 rows/s over one sequence; one fixed run after a 25-seller warm-up carried 486;
      // after one 25-seller and one full-size run, 782 and 856 against 1,020 and 928 for the bare
      // runs on the default's pool). An idle pool costs the others next to nothing (its processes
      // wait on Redis: see the idle pool's commands above).
      const openSide = <T>(side: Side, fn: (ctx: Ctx) => Promise<T>): Promise<T> => {
        const perProcess = fixed?.perProcess ?? plainPool?.perProcess ?? Math.max(1, Math.ceil(mostInFlight / PROCESSES));
        const pool: FixedPool = { perProcess, runs: [] };
        if (side === 'fixed') fixed = pool;
        else plainPool = pool;
        const plain = side === 'plain';
        return bench.withPool('none', async (ctx) => {
          // sellers of their own per pool: the mock API counts each seller's registrations for the whole bench
          const t = plain ? 'p' : 'f';
          for (let w = 0; w < 3; w++) await capacityRun(bench, api, ctx, { limiter: 'bare', sellerKind: 'none', tag: `${t}warm${w}-` });
          return fn(ctx);
        }, {
          QUEUE_PREFIX: plain ? '{bench-capacity-plain}' : '{bench-capacity-fixed}', WORKER_CONCURRENCY: String(perProcess),
          JOB_RETENTION_COUNT: String(CAPACITY_RETAINED_JOBS),
        }, PROCESSES, { plain });
      };
      const runFrom = async (entries: Entry[], open: Partial<Record<Side, Ctx>>): Promise<void> => {
        for (const [i, s] of entries.entries()) {
          if (s.side && !open[s.side]) {
            const side = s.side;
            return openSide(side, (ctx) => runFrom(entries.slice(i), { ...open, [side]: ctx }));
          }
          const peer = !s.side && s.limiter !== 'bare' && s.limiter !== 'sliding-window';
          const run = await capacityRun(bench, api, s.side ? open[s.side]! : main, {
            limiter: s.limiter, sellerKind: s.kind, tag: `${s.side === 'fixed' ? 'f' : s.side === 'plain' ? 'p' : 'c'}${n++}-`,
            ...(s.library ? { library: s.library } : {}), ...(peer ? { timeLimitMs: PEER_TIME_MS } : {}), ...(s.release ? { release: true } : {}),
          });
          if (s.release) {
            released.set(s.limiter, run.result.ramp);
            say(`  capacity ${s.limiter}, its backlog released at once: ${run.result.ramp?.workingSize} requests inside the API at work, 90 % of them ${run.result.ramp?.to90Ms ?? '–'} ms after the first arrival`);
            continue;
          }
          if (s.side) {
            const pool = s.side === 'fixed' ? fixed! : plainPool!;
            pool.runs.push(run);
            log(run, `${s.side === 'fixed' ? 'bare' : 'plain BullMQ + axios'} at a fixed ${pool.perProcess} jobs per process`);
            continue;
          }
          if (s === ours) mostInFlight = Math.max(mostInFlight, run.result.concurrency ?? 0);
          runs.push({ limiter: s.limiter, run });
          log(run);
        }
      };
      await runFrom(sequence, {});
    }), {
      QUEUE_PREFIX: '{bench-capacity}', ...(SHARDS > 1 ? { QUEUE_SHARDS: String(SHARDS) } : {}),
      // BullMQ keeps this many finished jobs and removes the oldest with each completion once
      // past it, as a queue that has run a while does: the warm-up runs (3 x 10,007 rows) take the
      // queue past it, so every measured run pays that removal (at the default 10,000 the
      // first bare run would not, and would look cheaper than the rest)
      JOB_RETENTION_COUNT: String(CAPACITY_RETAINED_JOBS),
    });
    if (!PEERS || PEERS.includes('bullmq-limiter')) {
      await bench.withPool('none', (ctx) => withRealtimeRedis(bench.redisPids, async () => {
        const run = await capacityRun(bench, api, ctx, {
          limiter: 'bullmq-limiter', sellerKind: 'none', tag: 'q-', library: `bullmq@${versionOf('bullmq')}`, timeLimitMs: BULLMQ_LIMITER_TIME_MS,
        });
        runs.push({ limiter: 'bullmq-limiter', run });
        log(run);
      }), { QUEUE_PREFIX: '{bench-bullmq-limiter}', BENCH_QUEUE_LIMITER: `${RULE.limit}/${RULE.windowMs}` });
    }
  } finally {
    await api.close();
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const bares = runs.filter((r) => r.limiter === 'bare').map((r) => r.run.result);
  const bareRate = mean(bares.map((b) => b.rowsPerSec!));
  const bareUsec = mean(bares.map((b) => b.redisUsecPerRow!));
  const bareCpu = mean(bares.map((b) => b.redisCpuUsPerRow!));
  const ratiosOf = ({ limiter, run }: { limiter: CapacityLimiter; run: CapacityRun }) => ({
    throughputRatio: round(limiter === 'bare' ? 1 : run.result.rowsPerSec! / bareRate),
    redisCpuRatio: limiter === 'bare' ? 1 : run.result.redisUsecPerRow === null ? null : round(run.result.redisUsecPerRow! / bareUsec),
    redisProcessCpuRatio: limiter === 'bare' ? 1 : run.result.redisCpuUsPerRow === null ? null : round(run.result.redisCpuUsPerRow! / bareCpu),
  });
  // the limiters run several times (the default and rate-limiter-flexible): their rate, Redis
  // costs, ratios, first registrations and small seller are each the median of their runs (a
  // cost and its ratio to bare's always the same median), their other figures (the spans, the
  // ramp, RSS) those of their median run by Redis's cost
  const repeated: CapacityLimiter[] = ['sliding-window', 'rate-limiter-flexible'];
  const runsOf = (limiter: CapacityLimiter) => runs.filter((r) => r.limiter === limiter);
  const ours = runsOf('sliding-window');
  const medianOf = (repeats: NonNullable<ScenarioResult['repeats']>) => {
    const med = (pick: (x: (typeof repeats)[number]) => number | null) => median(repeats.map(pick).filter((v): v is number => v !== null));
    return {
      rowsPerSec: med((x) => x.rowsPerSec), throughputRatio: med((x) => x.throughputRatio),
      redisCpuRatio: med((x) => x.redisCpuRatio), redisProcessCpuRatio: med((x) => x.redisProcessCpuRatio),
      redisUsecPerRow: med((x) => x.redisUsecPerRow ?? null), redisCpuUsPerRow: med((x) => x.redisCpuUsPerRow ?? null),
      firstRegistrationMs: { p50: med((x) => x.firstRegistrationP50Ms ?? null), p99: med((x) => x.firstRegistrationP99Ms ?? null), max: med((x) => x.firstRegistrationMaxMs ?? null) },
      smallSellerMs: repeats.some((x) => x.smallSellerMs !== null) ? med((x) => x.smallSellerMs ?? null) : null,
      tooMany: repeats.reduce((n, x) => n + x.tooMany, 0), runs: repeats.length, repeats,
    };
  };
  const middleOf = (limiter: CapacityLimiter) => {
    const byCost = [...runsOf(limiter)].sort((a, b) => (ratiosOf(a).redisCpuRatio ?? 0) - (ratiosOf(b).redisCpuRatio ?? 0));
    return byCost[Math.floor((byCost.length - 1) / 2)];
  };
  const middles = new Set(repeated.map(middleOf));
  const reported = runs.filter((r, i) => (r.limiter === 'bare' ? i === runs.findIndex((x) => x.limiter === 'bare') : !repeated.includes(r.limiter) || middles.has(r)));
  const eachRun = (r: (typeof runs)[number]) => ({
    rowsPerSec: r.run.result.rowsPerSec!, tooMany: r.run.result.tooMany, ...ratiosOf(r),
    redisUsecPerRow: r.run.result.redisUsecPerRow ?? null, redisCpuUsPerRow: r.run.result.redisCpuUsPerRow ?? null,
    firstRegistrationP50Ms: r.run.result.firstRegistrationMs!.p50, firstRegistrationP99Ms: r.run.result.firstRegistrationMs!.p99,
    firstRegistrationMaxMs: r.run.result.firstRegistrationMs!.max, smallSellerMs: r.run.result.smallSellerMs ?? null,
  });
  const oursRate = median(ours.map((r) => r.run.result.rowsPerSec!));
  const againstFixed = (pool: FixedPool): FixedPoolFigures => {
    const rate = mean(pool.runs.map((r) => r.result.rowsPerSec!));
    return {
      perProcess: pool.perProcess, rowsPerSec: round(rate, 1), runs: pool.runs.map((r) => r.result.rowsPerSec!),
      ratio: round(oursRate / rate), rampTo90Ms: pool.runs[0]!.result.ramp?.to90Ms ?? null, workingSize: pool.runs[0]!.result.ramp?.workingSize,
      workerCpuUsPerRow: round(mean(pool.runs.map((r) => r.result.workerCpuUsPerRow ?? 0)), 0),
    };
  };
  const results = reported.map((entry) => ({
    ...entry.run.result,
    ...(entry.limiter === 'bare' ? { rowsPerSec: round(bareRate, 1), redisUsecPerRow: round(bareUsec, 1), redisCpuUsPerRow: round(bareCpu, 1), runs: bares.length } : {}),
    ...ratiosOf(entry),
    ...(repeated.includes(entry.limiter) && runsOf(entry.limiter).length > 1 ? medianOf(runsOf(entry.limiter).map(eachRun)) : {}),
    sellerSpanRatio: spanRatios(entry.run.spans, bareRate),
    ...(released.get(entry.limiter) ? { releasedRamp: released.get(entry.limiter) } : {}),
    ...(entry.limiter === 'sliding-window' && fixed ? { fixedBare: againstFixed(fixed) } : {}),
    ...(entry.limiter === 'sliding-window' && plainPool ? { plainBare: againstFixed(plainPool) } : {}),
  }));
  say(`  capacity: bare ${bares.map((b) => b.rowsPerSec).join(', ')} rows/s; ${results.map((r) => `${r.limiter} ${r.throughputRatio} of bare, Redis ${r.redisCpuRatio}× in commands, ${r.redisProcessCpuRatio}× CPU`).join('; ')}`);
  for (const limiter of repeated) {
    const mine = runsOf(limiter);
    if (mine.length > 1) say(`  capacity ${limiter}, each run: ${mine.map((r) => { const x = eachRun(r); return `${x.throughputRatio} of bare, Redis ${x.redisCpuRatio}× / ${x.redisProcessCpuRatio}×, first registration p99 ${x.firstRegistrationP99Ms} ms, small seller ${x.smallSellerMs ?? '–'} ms`; }).join('; ')} (each figure's median is reported)`);
  }
  return { results, idleCommandsPerSec: idle, redisScheduling };
}
