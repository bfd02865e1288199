/**
 * `capacity`: the pool at a real API's latency (150-250 ms). 200 sellers x 50
 * rows are uploaded at once, and a 7-row seller 1 s later, under the bench's
 * rule (50 per 2 s, guard 100 ms). The rule allows every seller's 50 rows at
 * once, so the pool, not the rule, sets the pace: what is measured is how many
 * rows/s the pool carries against bare BullMQ at the same concurrency, and how
 * fairly it shares them between sellers.
 *
 * Bare BullMQ enqueues plain jobs (no priority, no counters) and its processor
 * makes the same HTTP call with no limiter and no counting. Every figure belongs
 * to its own run: Redis's command statistics are reset before each run, and
 * so is each worker's peak RSS (/proc/<pid>/clear_refs).
 */
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MockRegistrationApi } from '../../src/mock-api/server.js';
import { QueueSet } from '../../src/queue.js';
import { shardPrefixes } from '../../src/queue-shards.js';
import { SHARDS, queuesOn } from './many-sellers.js';
import { Bench, MemorySampler, RULE, cpuMs, schedStats, round, say, sleep, scenario, peakRssMb, startProducer, type Ctx, type ScenarioResult } from '../harness.js';

/** How long a stopped run's rows in flight may take to finish before the next run starts (ms). */
const ACTIVE_WAIT_MS = 30_000;

export const CAPACITY = { sellers: 200, rows: 50, smallRows: 7, smallAfterMs: 1000, latencyMs: { min: 150, max: 250 } } as const;

/** The name a capacity run goes by in results.json (the peers' contain their library's name). */
export type CapacityLimiter = 'sliding-window' | 'bare' | 'rate-limiter-flexible' | 'bottleneck' | 'bullmq-limiter' | 'naive' | 'token-bucket';

export interface RedisStats {
  calls: number;
  usec: number;
}

/** Each command's calls and usec so far (INFO commandstats), costliest first. */
async function commandStats(ctx: Ctx): Promise<Array<{ cmd: string; calls: number; usec: number }>> {
  return [...(await ctx.redis.info('commandstats')).matchAll(/cmdstat_(\S+):calls=(\d+),usec=(\d+)/g)]
    .map((m) => ({ cmd: m[1]!, calls: Number(m[2]), usec: Number(m[3]) })).sort((a, b) => b.usec - a.usec);
}

export async function redisStats(ctx: Ctx): Promise<RedisStats> {
  const cmds = await commandStats(ctx);
  return { calls: cmds.reduce((n, c) => n + c.calls, 0), usec: cmds.reduce((n, c) => n + c.usec, 0) };
}

/** Redis's network counters (INFO stats): requests read, replies written, commands run, bytes in and out. */
async function netStats(ctx: Ctx) {
  const info = await ctx.redis.info('stats');
  const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1] ?? 0);
  return {
    reads: field('total_reads_processed'), writes: field('total_writes_processed'), commands: field('total_commands_processed'),
    bytesIn: field('total_net_input_bytes'), bytesOut: field('total_net_output_bytes'),
  };
}

/** Resets the peak RSS the kernel keeps for each process (VmHWM) to its current RSS. */
function resetPeakRss(pids: number[]): void {
  for (const pid of pids) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      // gone, or not allowed: the peak then covers the process's whole life
    }
  }
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
};

export interface CapacityRun {
  result: ScenarioResult;
  /** Sellers' last registrations: for the span figure once bare's rate is known. */
  spans: number[];
}

/**
 * One capacity run on a running pool. `sellerKind` is the prefix that picks the
 * limiter in a by-seller pool ('none' for bare BullMQ and BullMQ's own limiter).
 * Stops waiting after `timeLimitMs` (a limiter too slow to finish in the bench's
 * time); the figures then cover what was registered and say so (`complete`).
 */
export async function capacityRun(
  bench: Bench, api: MockRegistrationApi, ctx: Ctx,
  opts: {
    limiter: CapacityLimiter; sellerKind: string; tag: string; library?: string; timeLimitMs?: number; sellers?: number;
    /** The uploads go to paused queues, released at once when all are in: a backlog that appears at once (for the ramp). */
    release?: boolean;
  },
): Promise<CapacityRun> {
  const count = opts.sellers ?? CAPACITY.sellers;
  const sellers = Array.from({ length: count }, (_, i) => `${opts.sellerKind}--${opts.tag}${i}`);
  const small = `${opts.sellerKind}--${opts.tag}small`;
  // a seller's upload starts when it is submitted: the figures below include the
  // producer's own time (with 200 uploads at once, an upload's enqueue can finish
  // after its first rows were already registered). The producer runs in a process of
  // its own, as `bulk-register upload` and the console do (bench/producer-child.ts)
  const producer = await startProducer({
    config: ctx.config, shards: SHARDS, bare: opts.limiter === 'bare',
    uploads: [...sellers.map((seller) => ({ seller, rows: CAPACITY.rows, afterMs: 0 })), { seller: small, rows: CAPACITY.smallRows, afterMs: CAPACITY.smallAfterMs }],
  });
  const queues = SHARDS > 1 ? queuesOn(ctx, shardPrefixes(ctx.config.queuePrefix, SHARDS)) : QueueSet.of(ctx.queue);

  resetPeakRss(ctx.pids());
  await ctx.redis.config('RESETSTAT');
  const net0 = process.env.BENCH_DEBUG ? await netStats(ctx) : undefined;
  if (process.env.BENCH_DEBUG_SLOWLOG) {
    await ctx.redis.config('SET', 'slowlog-log-slower-than', '0');
    await ctx.redis.config('SET', 'slowlog-max-len', '200000');
    await ctx.redis.slowlog('RESET');
  }
  const cpu0 = { redis: cpuMs(bench.redisPids), workers: cpuMs(ctx.pids()) };
  const sched0 = process.env.BENCH_DEBUG ? schedStats(ctx.pids()) : undefined;
  // the bench's own event loop, which serves the mock API: how late its timers fire
  const loopDelay = process.env.BENCH_DEBUG ? monitorEventLoopDelay({ resolution: 10 }) : undefined;
  loopDelay?.enable();
  // and when it stalled for 150 ms or more (ms into the run, how long)
  const queueList = queues.prefixes.map((prefix) => queues.get(prefix));
  if (opts.release) await Promise.all(queueList.map((q) => q.pause()));
  const started = Date.now();
  const stalls: string[] = [];
  let tick = started;
  const stallTimer = loopDelay ? setInterval(() => { const t = Date.now(); if (t - tick >= 150) stalls.push(`${tick - started}+${t - tick}`); tick = t; }, 10) : undefined;
  const produced = producer.go();
  if (opts.release) {
    await produced;
    await Promise.all(queueList.map((q) => q.resume()));
  }

  const total = count * CAPACITY.rows + CAPACITY.smallRows;
  const deadline = started + (opts.timeLimitMs ?? 150_000);
  const registered = () => [...sellers, small].reduce((n, s) => n + (api.sellerStats(s)?.answered.length ?? 0), 0);
  // the jobs the pool's processes allow at once, every 100 ms
  const series: number[] = [];
  // and their memory, every second
  const memory = new MemorySampler(() => ctx.pids());
  while (registered() < total && Date.now() < deadline) {
    series.push(ctx.inFlight());
    if (series.length % 10 === 1) memory.sample();
    await sleep(100);
  }
  memory.sample();
  // jobs in flight over the pool: the most its processes allowed at once during the run
  const concurrency = Math.max(0, ...series);
  const complete = registered() >= total;
  const end = Date.now();
  const { uploadedAt, enqueuedAt } = await produced;
  const stats = await redisStats(ctx);
  const cpu = { redis: cpuMs(bench.redisPids) - cpu0.redis, workers: cpuMs(ctx.pids()) - cpu0.workers };
  if (net0) {
    const net = await netStats(ctx);
    const cmds = await commandStats(ctx);
    const scripts = cmds.find((c) => c.cmd === 'evalsha')?.calls ?? 0;
    process.stdout.write(`    ${opts.limiter} per row: ${Object.entries(net).map(([k, v]) => `${k} ${((v - net0[k as keyof typeof net0]) / total).toFixed(2)}`).join(', ')}, scripts ${(scripts / total).toFixed(2)}\n`);
    process.stdout.write(`    ${opts.limiter} commands per row (calls, usec): ${cmds.map((c) => `${c.cmd} ${(c.calls / total).toFixed(2)} ${(c.usec / total).toFixed(1)}`).join(', ')}\n`);
  }
  if (process.env.BENCH_DEBUG_SLOWLOG) {
    const log = (await ctx.redis.slowlog('GET', 200000)) as Array<[number, number, number, string[]]>;
    await ctx.redis.config('SET', 'slowlog-log-slower-than', '10000');
    const by = new Map<string, { n: number; us: number }>();
    for (const [, , us, args] of log) {
      const k = args[0]!.toLowerCase().startsWith('eval') ? `${args[0]} ${String(args[1]).slice(0, 8)}` : String(args[0]);
      const e = by.get(k) ?? { n: 0, us: 0 };
      e.n++; e.us += us; by.set(k, e);
    }
    process.stdout.write(`    slowlog: ${[...by].sort((a, b) => b[1].us - a[1].us).slice(0, 10).map(([k, e]) => `${k} ${(e.n / total).toFixed(2)}x ${(e.us / e.n).toFixed(0)}µs`).join(', ')}\n`);
  }
  const rss = peakRssMb(ctx.pids());
  if (!complete) {
    // the rest is not measured: the run's rows still waiting are dropped, and the next
    // run starts once those in flight are done, or after ACTIVE_WAIT_MS (bottleneck holds
    // rows in its worker-side queue: on a slower machine 4 of them were still held 5 minutes
    // later), the rest finishing beside it (its sellers are its own, and so are its counts)
    for (const prefix of queues.prefixes) await queues.get(prefix).drain(true);
    const activeOf = async () => (await Promise.all(queues.prefixes.map((p) => queues.get(p).getActiveCount()))).reduce((a, b) => a + b, 0);
    const waitUntil = Date.now() + ACTIVE_WAIT_MS;
    while ((await activeOf()) > 0 && Date.now() < waitUntil) await sleep(100);
    const left = await activeOf();
    if (left > 0) say(`  capacity ${opts.limiter}: ${left} rows still held ${ACTIVE_WAIT_MS / 1000} s after its stop; the next run starts beside them`);
  }

  const figures = [...sellers, small].map((s) => api.sellerStats(s));
  // a row counts as registered when its seller's worker has the API's 201 (its
  // arrival there is the latency earlier)
  const times = figures.flatMap((f) => f?.answered ?? []);
  const last = complete ? Math.max(...times) : end;
  const rowsDone = times.length;
  // upload -> first registration; a seller with none yet counts the whole run (a lower bound)
  const firsts = sellers.map((s) => {
    const t = api.sellerStats(s)?.answered ?? [];
    return (t.length > 0 ? Math.min(...t) : end) - uploadedAt[s]!;
  });
  const spans = sellers.map((s) => {
    const t = api.sellerStats(s)?.answered ?? [];
    return (t.length === CAPACITY.rows ? Math.max(...t) : end) - uploadedAt[s]!;
  });
  const smallTimes = api.sellerStats(small)?.answered ?? [];
  if (process.env.BENCH_DEBUG) {
    const enq = sellers.map((s) => enqueuedAt[s]! - uploadedAt[s]!);
    const sent = sellers.map((s) => Math.min(...(api.sellerStats(s)?.times ?? [end])) - uploadedAt[s]!);
    const asks = [...sellers, small].reduce((n, s) => n + bench.count('permit', s), 0);
    const ahead = [...sellers, small].reduce((n, s) => n + bench.count('permitAhead', s), 0);
    const sched = schedStats(ctx.pids());
    const per = (k: keyof typeof sched) => ((sched[k] - sched0![k]) / Math.max(1, rowsDone)).toFixed(k.endsWith('Ms') ? 3 : 2);
    process.stdout.write(`    workers per row: user ${per('userMs')} ms, system ${per('sysMs')} ms, context switches ${per('voluntary')} voluntary, ${per('involuntary')} preempted\n`);
    process.stdout.write(`    slots every 100 ms: ${series.join(' ')}\n`);
    process.stdout.write(`    permits ${asks}, asked ahead ${ahead} (${(ahead / Math.max(1, asks)).toFixed(3)})\n`);
    loopDelay!.disable();
    clearInterval(stallTimer);
    const ms = (ns: number) => (ns / 1e6).toFixed(0);
    process.stdout.write(`    the bench's event loop (the mock API's): delay p50/p99/max ${ms(loopDelay!.percentile(50))}/${ms(loopDelay!.percentile(99))}/${ms(loopDelay!.max)} ms; stalls (ms into the run + ms) ${stalls.join(' ') || 'none'}\n`);
    process.stdout.write(`    run (ms since the epoch, for a profile's samples) ${opts.limiter} ${opts.tag} ${started}-${end}\n`);
    process.stdout.write(`    upload -> enqueued p50/p99 ${percentile(enq, 50)}/${percentile(enq, 99)} ms, -> first arrival at the API p50/p99 ${percentile(sent, 50)}/${percentile(sent, 99)} ms\n`);
    const smallStats = api.sellerStats(small);
    const since = (ts: number[] | undefined) => (ts ?? []).map((t) => t - uploadedAt[small]!).sort((a, b) => a - b).join(' ');
    process.stdout.write(`    small seller, ms after its upload: enqueued ${enqueuedAt[small]! - uploadedAt[small]!}, arrivals ${since(smallStats?.times)}, answers ${since(smallStats?.answered)}\n`);
  }
  return {
    spans,
    result: scenario({
      name: 'capacity', limiter: opts.limiter as ScenarioResult['limiter'], rows: total, sellers: count + 1,
      ...(opts.library ? { library: opts.library } : {}),
      concurrency, meanConcurrency: round(series.reduce((a, b) => a + b, 0) / Math.max(1, series.length), 0), complete, ...(complete ? {} : { timeLimitS: Math.round((deadline - started) / 1000) }),
      registered: figures.reduce((n, f) => n + (f?.registered ?? 0), 0),
      tooMany: figures.reduce((n, f) => n + (f?.tooMany ?? 0), 0),
      maxInWindow: Math.max(0, ...figures.map((f) => f?.maxArrivalsInWindow ?? 0)),
      rowsPerSec: round(rowsDone / ((last - started) / 1000), 1),
      firstRegistrationMs: { p50: Math.round(percentile(firsts, 50)), p99: Math.round(percentile(firsts, 99)), max: Math.round(Math.max(...firsts)) },
      smallSellerMs: smallTimes.length === CAPACITY.smallRows ? Math.max(...smallTimes) - uploadedAt[small]! : null,
      redisCommandsPerRow: rowsDone > 0 ? round(stats.calls / rowsDone, 1) : null,
      redisUsecPerRow: rowsDone > 0 ? round(stats.usec / rowsDone, 1) : null,
      redisCpuUsPerRow: rowsDone > 0 ? round((cpu.redis * 1000) / rowsDone, 1) : null,
      workerCpuUsPerRow: rowsDone > 0 ? round((cpu.workers * 1000) / rowsDone, 1) : null,
      peakRssMb: rss,
      memory: memory.figures(),
      ramp: rampOf(figures.flatMap((f) => f?.times ?? []), times),
    }),
  };
}

/**
 * Each seller's span (upload -> last registration) ÷ its optimum. With 50 rows
 * under a rule of 50 per window the rule alone allows them at once, so the
 * optimum is what a perfectly fair pool gives everyone when saturated: all of
 * the scenario's rows at bare BullMQ's measured rate, every seller finishing at
 * the end. 1.0 is a perfect fair share at bare speed; a first-come pool gives
 * early sellers far less and late ones about 1.
 */
export function spanRatios(spans: number[], bareRowsPerSec: number): { p50: number; p99: number } {
  const rows = CAPACITY.sellers * CAPACITY.rows + CAPACITY.smallRows;
  const ruleOptimum = (Math.ceil(CAPACITY.rows / RULE.limit) - 1) * (RULE.windowMs + RULE.guardMs);
  const optimum = Math.max(ruleOptimum, (rows / bareRowsPerSec) * 1000);
  const ratios = spans.map((s) => s / optimum);
  return { p50: round(percentile(ratios, 50)), p99: round(percentile(ratios, 99)) };
}

/** The ramp's plot covers this much of a run's start (ms), one point per RAMP_STEP_MS. */
export const RAMP_PLOT_MS = 4000;
const RAMP_STEP_MS = 50;

/**
 * Requests inside the API at once over a run, from its arrivals and answers: the
 * pool's working size (the median over the middle half of the run), when it first
 * reached 90 % of it from the first arrival, and the series for the plot.
 */
export function rampOf(arrivals: number[], answers: number[]): NonNullable<ScenarioResult['ramp']> {
  if (arrivals.length === 0) return { workingSize: 0, to90Ms: null, series: [] };
  const events = [...arrivals.map((t) => [t, 1] as const), ...answers.map((t) => [t, -1] as const)].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const t0 = events[0]![0];
  const end = events[events.length - 1]![0];
  // requests inside the API at each step from t0
  const steps: number[] = [];
  let inside = 0;
  let i = 0;
  for (let t = t0; t <= end; t += RAMP_STEP_MS) {
    while (i < events.length && events[i]![0] <= t) inside += events[i++]![1];
    steps.push(inside);
  }
  const middle = steps.slice(Math.floor(steps.length / 4), Math.ceil((steps.length * 3) / 4));
  const workingSize = middle.length > 0 ? [...middle].sort((a, b) => a - b)[Math.floor(middle.length / 2)]! : 0;
  // the first moment (exact, not stepped) with 90 % of the working size inside
  let to90Ms: number | null = null;
  inside = 0;
  for (const [t, d] of events) {
    inside += d;
    if (inside >= 0.9 * workingSize) {
      to90Ms = t - t0;
      break;
    }
  }
  return { workingSize, to90Ms, series: steps.slice(0, RAMP_PLOT_MS / RAMP_STEP_MS + 1) };
}

/** Commands per second Redis receives from an idle pool (no rows at all), over `ms`. */
export async function idleCommandsPerSec(ctx: Ctx, ms = 6_000): Promise<number> {
  await sleep(3000); // the last rows' completions and cleanup land first
  await ctx.redis.config('RESETSTAT');
  await sleep(ms);
  const { calls } = await redisStats(ctx);
  if (process.env.BENCH_DEBUG) process.stdout.write(`    idle: ${(await commandStats(ctx)).map((c) => `${c.cmd} ${c.calls}`).join(', ')}\n`);
  // the reading itself (INFO) is one of them
  return round((calls - 1) / (ms / 1000), 1);
}
