/**
 * What every bench scenario shares: the rule, the Bench (a pool of worker
 * processes on a redis-server and a mock API, with the workers' event counts),
 * sheets, and the readings of Redis and of processes. Scenarios live in
 * bench/scenarios/, the comparison limiters in bench/peers/ and alt-limiters.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { loadConfig, type Config } from '../src/config.js';
import type { LoadedSheet } from '../src/excel/load-sheet.js';
import { sampleProducts } from '../src/fixtures/build-sheet.js';
import { QUEUE_NAME, namespaceOf } from '../src/keys.js';
import { createLogger } from '../src/logger.js';
import type { MockRegistrationApi } from '../src/mock-api/server.js';
import { workerConfigEnv } from '../src/worker/worker-config.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { bullConnection, createRedis, type RedisClient } from '../src/redis.js';
import { jobIdFor, jobOptions, type RegistrationJob } from '../src/queue.js';
import { WorkerPool } from '../src/worker/supervisor.js';
import { readsPauses, type LimiterKind } from './alt-limiters.js';
import type { ProducerPlan, ProducerTimes } from './producer-child.js';

export type PoolKind = LimiterKind | 'by-seller';
/** A pool's handle in a scenario; `inFlight`: the jobs its processes allow at once now (the sum of their concurrency, as each last reported it; 0 for a plain pool). */
export type Ctx = { config: Config; redis: RedisClient; queue: Queue<RegistrationJob>; pids: () => number[]; inFlight: () => number };

export const RULE = { limit: 50, windowMs: 2000, guardMs: 100 };
export const PROCESSES = 16;
export const LIMITERS: LimiterKind[] = (process.env.BENCH_ONLY?.split(',') as LimiterKind[] | undefined) ?? ['sliding-window', 'rate-limiter-flexible', 'bottleneck', 'token-bucket', 'naive'];
/** BENCH_SCENARIOS (comma-separated) runs only those scenarios, for working on one. */
export const SCENARIOS = process.env.BENCH_SCENARIOS?.split(',');
/** BENCH_ROUNDS: how many default-limiter runs many-sellers makes, each followed by a bare run (2). */
export const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2) || 2);
export const BENCH_DIR = join(PACKAGE_ROOT, 'bench');
/** The pool's process, bundled as the product's is (`npm run build`: scripts/bundle.mjs). */
export const WORKER_ENTRY = fileURLToPath(new URL('./bundle/bench-worker.js', import.meta.url));
export const PLAIN_WORKER_ENTRY = fileURLToPath(new URL('./plain-worker.js', import.meta.url));
export const SCENARIO_TIMEOUT_MS = 150_000;

/** A pool fixed at the most jobs the default had in flight: its figures, and the default's median rows/s ÷ its. */
export type FixedPoolFigures = {
  perProcess: number; rowsPerSec: number; runs?: number[]; ratio: number; rampTo90Ms: number | null; workingSize: number | undefined; workerCpuUsPerRow?: number | null;
};

export interface ScenarioResult {
  name: string;
  /** The limiter's name; for a library, a name that contains the library's. */
  limiter: LimiterKind | 'none' | 'bare' | 'bullmq-limiter';
  /** A library's name and version (the comparison peers). */
  library?: string;
  rows: number;
  sellers: number;
  processes: number;
  limit: number;
  windowMs: number;
  guardMs: number;
  registered: number;
  tooMany: number;
  maxInWindow: number;
  spanRatio: number | null;
  limiterCallsPerRow: number | null;
  delaysPerRow: number | null;
  redisCommandsPerRow: number | null;
  smallSellerMs: number | null;
  throughputRatio: number | null;
  // many-sellers-cluster only
  /** Masters of the cluster, and the queue shards the rows went to. */
  masters?: number;
  queueShards?: number;
  /** Each master's commands ÷ the mean over the masters, in the kind's last run. */
  masterShares?: number[];
  /** Each limiter run's rows/s ÷ the bare runs on the same shards around it, in the order run (throughputRatio: their median). */
  runRatios?: number[];
  /** rows/s ÷ bare BullMQ on one queue of the same cluster. */
  throughputRatioOneQueue?: number;
  /** Permits asked in a round trip of their own per row (the rest rode in the write that finished the row before). */
  ownAsksPerRow?: number;
  // capacity only
  /** Jobs in flight over the pool (processes x WORKER_CONCURRENCY). */
  concurrency?: number;
  /** Its mean over the run, sampled every 100 ms: how far a pool that sizes itself stayed below its most. */
  meanConcurrency?: number;
  /** False when the run was stopped at its time limit; its figures cover what was registered. */
  complete?: boolean;
  /** The time limit (s) a run that was stopped had. */
  timeLimitS?: number;
  rowsPerSec?: number;
  firstRegistrationMs?: { p50: number; p99: number; max: number };
  sellerSpanRatio?: { p50: number; p99: number };
  /** INFO commandstats usec (time inside commands, scripts' inner commands counted again) per row. */
  redisUsecPerRow?: number | null;
  /** The redis-server process's CPU time (user + system, /proc) per row. */
  redisCpuUsPerRow?: number | null;
  /** redisCpuUsPerRow ÷ bare BullMQ's. */
  redisProcessCpuRatio?: number | null;
  /** The worker processes' CPU time per row. */
  workerCpuUsPerRow?: number | null;
  redisCpuRatio?: number | null;
  peakRssMb?: number;
  /** A worker's peak anonymous memory and PSS, and the pool's PSS at its highest (MemorySampler). */
  memory?: { peakAnonMb: number; peakPssMb: number; poolPssMb: number };
  /**
   * The ramp, from the API's side: requests inside the API at once (arrived, not
   * answered) from the run's first arrival. `workingSize`: the median over the middle
   * half of the run; `to90Ms`: when it first reached 90 % of that; `series`: every
   * 50 ms of the first RAMP_PLOT_MS.
   */
  ramp?: { workingSize: number; to90Ms: number | null; series: number[] };
  /** The ramp of a run of its own whose backlog (every upload) was released at once from paused queues. */
  releasedRamp?: { workingSize: number; to90Ms: number | null; series: number[] };
  /** How many runs the figures come from (bare: their mean; the default limiter: its median run). */
  runs?: number;
  /** The default limiter: each run's figures, in the order run. */
  /**
   * A bare BullMQ pool of its own whose concurrency is fixed at the most jobs the
   * default had in flight (÷ the processes, rounded up), as an acceptance run sizes
   * it: its rows/s, and the default's median rows/s ÷ it.
   */
  fixedBare?: FixedPoolFigures;
  /** The same for a plain BullMQ + axios pool (bench/plain-worker.ts) at the same fixed concurrency. */
  plainBare?: FixedPoolFigures;
  repeats?: Array<{
    rowsPerSec: number; tooMany: number; throughputRatio: number; redisCpuRatio: number | null; redisProcessCpuRatio: number | null;
    redisUsecPerRow?: number | null; redisCpuUsPerRow?: number | null; firstRegistrationP50Ms?: number; firstRegistrationP99Ms?: number; firstRegistrationMaxMs?: number; smallSellerMs?: number | null;
  }>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const benchStarted = Date.now();
/** A progress line, stamped with the seconds since the bench started. */
export const say = (line: string) => process.stdout.write(`[${((Date.now() - benchStarted) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
export const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const optimum = (n: number) => (Math.ceil(n / RULE.limit) - 1) * (RULE.windowMs + RULE.guardMs);

export function sheetOf(prefix: string, count: number): LoadedSheet {
  const products = sampleProducts(prefix, count);
  return {
    rows: count,
    valid: products.map((product, i) => ({ row: i + 2, product, attributes: {} })),
    errors: [],
    warnings: [],
    raw: [],
    columns: [],
    extraColumns: [],
    file: `${prefix}.xlsx`,
    sha256: createHash('sha256').update(`${prefix}:${count}:${randomBytes(8).toString('hex')}`).digest('hex'),
  };
}

/**
 * Bare BullMQ's jobs for a sheet: the same rows as the producer's, added first-come,
 * with nothing of ours around them (no priority, no counters).
 */
export function bareJobs(seller: string, sheet: LoadedSheet, config: Config) {
  const options = jobOptions(config);
  const uploadId = sheet.sha256.slice(0, 24);
  return sheet.valid.map(({ row, product }) => ({
    name: 'register', data: { sellerId: seller, uploadId, row, product },
    opts: { attempts: options.attempts, backoff: options.backoff, removeOnComplete: options.removeOnComplete, removeOnFail: options.removeOnFail, jobId: jobIdFor(uploadId, row) },
  }));
}

/** Redis's nodes: the server itself, or every master of a cluster. */
export function redisNodes(redis: RedisClient): Array<Pick<RedisClient, 'info'>> {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** Commands each node (the server, or each master of a cluster) has run so far (INFO commandstats). */
export async function callsPerNode(redis: RedisClient): Promise<number[]> {
  return Promise.all(redisNodes(redis).map(async (n) => [...(await n.info('commandstats')).matchAll(/calls=(\d+)/g)].reduce((s, m) => s + Number(m[1]), 0)));
}

/** Commands Redis has run so far (over every master of a cluster). */
export async function commandCalls(redis: RedisClient): Promise<number> {
  return (await callsPerNode(redis)).reduce((a, b) => a + b, 0);
}

/**
 * How Redis is scheduled while a scenario measures its cost. INFO commandstats
 * usec is wall time inside each command: on this 2-core machine, shared with 16
 * worker processes, a script preempted halfway counts its wait as well (before
 * this, the default limiter's commands summed to more µs per row than the whole
 * redis-server process's CPU per row). With SCHED_FIFO, Redis runs whenever it
 * has work, as on a host of its own, and its µs are CPU time. Every limiter in the
 * scenario, and bare BullMQ, runs under the same policy.
 *
 * The bench's own process, which serves the mock API, runs at nice BENCH_API_NICE
 * (-10) meanwhile, for the same reason: a real API answers from hosts of its own.
 * At the default nice, sharing 2 cores with 16 busy workers, its timers fired
 * 10-35 ms late at the median and up to 542 ms late in a capacity run, so the
 * "150-250 ms" answers came later by that much (and more in the runs whose
 * producer did more work in this process). A capacity run's producer, forked
 * from here (bench/producer-child.ts), keeps that nice for every limiter.
 */
export async function withRealtimeRedis<T>(pids: number[], fn: (policy: string) => Promise<T>): Promise<T> {
  const chrt = (args: string[]) => execFileSync('chrt', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let policy = 'SCHED_FIFO 10';
  try {
    for (const pid of pids) chrt(['--fifo', '--all-tasks', '--pid', '10', String(pid)]);
  } catch (err) {
    policy = `shared (chrt refused: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim().split('\n')[0]})`;
  }
  const nice = Number(process.env.BENCH_API_NICE ?? -10);
  const niceBefore = getPriority();
  try {
    setPriority(nice);
    policy += `; the mock API's process at nice ${nice}`;
  } catch (err) {
    policy += `; the mock API's process at nice ${niceBefore} (renice refused: ${(err as Error).message})`;
  }
  say(`  Redis scheduling while measured: ${policy}`);
  try {
    return await fn(policy);
  } finally {
    try { setPriority(niceBefore); } catch { /* lowering a nice value back needs the privilege that raised it */ }
    for (const pid of pids) {
      try { chrt(['--other', '--all-tasks', '--pid', '0', String(pid)]); } catch { /* the server is gone */ }
    }
  }
}

/**
 * Samples a pool's memory while it runs (sample(), then figures()): each process's peak
 * anonymous memory (its heap, code and buffers: /proc/<pid>/status RssAnon) and peak PSS
 * (its RSS with each shared page split among the processes mapping it, such as node's
 * own binary: /proc/<pid>/smaps_rollup), and the pool's total PSS at its highest. RSS
 * counts every shared page in full in each process.
 */
export class MemorySampler {
  private anon = 0;
  private pss = 0;
  private pool = 0;
  constructor(private readonly pids: () => number[]) {}
  sample(): void {
    let total = 0;
    for (const pid of this.pids()) {
      try {
        const anon = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (anon) this.anon = Math.max(this.anon, Number(anon[1]));
        const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
        if (pss) {
          this.pss = Math.max(this.pss, Number(pss[1]));
          total += Number(pss[1]);
        }
      } catch {
        // gone
      }
    }
    this.pool = Math.max(this.pool, total);
  }
  figures(): { peakAnonMb: number; peakPssMb: number; poolPssMb: number } {
    return { peakAnonMb: round(this.anon / 1024, 1), peakPssMb: round(this.pss / 1024, 1), poolPssMb: round(this.pool / 1024, 1) };
  }
}

export function peakRssMb(pids: number[]): number {
  let peak = 0;
  for (const pid of pids) {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      // gone
    }
  }
  return round(peak, 1);
}

/** A process's user and system CPU so far (ms), from /proc/<pid>/stat (fields 14 and 15; USER_HZ = 100). Throws when it is gone. */
function processCpuMs(pid: number): { userMs: number; sysMs: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return { userMs: Number(fields[11]) * 10, sysMs: Number(fields[12]) * 10 };
}

/** CPU time (ms, user + system) the processes have used so far. */
export function cpuMs(pids: number[]): number {
  let ms = 0;
  for (const pid of pids) {
    try {
      const { userMs, sysMs } = processCpuMs(pid);
      ms += userMs + sysMs;
    } catch {
      // gone
    }
  }
  return ms;
}

/**
 * BENCH_DEBUG: the processes' user and system CPU (ms) and their context switches, voluntary
 * (waiting for I/O or a timer) and not (preempted), summed over every thread: how often a
 * pool's processes wake, beside what they spend.
 */
export function schedStats(pids: number[]): { userMs: number; sysMs: number; voluntary: number; involuntary: number } {
  const total = { userMs: 0, sysMs: 0, voluntary: 0, involuntary: 0 };
  for (const pid of pids) {
    try {
      const { userMs, sysMs } = processCpuMs(pid);
      total.userMs += userMs;
      total.sysMs += sysMs;
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
        total.voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
        total.involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      }
    } catch {
      // gone
    }
  }
  return total;
}

export class Bench {
  readonly events = new Map<string, number>();
  rssMb = 0;
  workerPids: number[] = [];
  /** The redis-server processes (every master of a cluster). */
  redisPids: number[] = [];

  constructor(
    readonly api: MockRegistrationApi,
    readonly redisUrl: string,
    readonly apiUrl: string,
    /** Environment of every pool of this Bench (e.g. WORKER_CONCURRENCY). */
    readonly poolEnv: Record<string, string> = {},
  ) {}

  count(event: string, seller: string): number {
    return this.events.get(`${event}\t${seller}`) ?? 0;
  }

  configFor(kind: PoolKind, extra: Record<string, string> = {}): { config: Config; env: NodeJS.ProcessEnv } {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REDIS_URL: this.redisUrl,
      REDIS_CLUSTER_NODES: '',
      REGISTRATION_API_URL: this.apiUrl,
      RATE_LIMIT_MAX: String(RULE.limit),
      RATE_LIMIT_WINDOW_MS: String(RULE.windowMs),
      RATE_LIMIT_GUARD_MS: String(RULE.guardMs),
      QUEUE_PREFIX: `{bench-${kind}}`,
      BENCH_LIMITER: kind,
      LOG_LEVEL: process.env.BENCH_POOL_LOG ?? 'error',
      LOG_PRETTY: '0',
      SHUTDOWN_TIMEOUT_MS: '10000',
      ...this.poolEnv,
      ...extra,
    };
    return { config: loadConfig(env), env };
  }

  /**
   * `plain`: the processes run bench/plain-worker.ts (BullMQ and axios, nothing of this
   * project) with Node's default heap settings instead of the pool's.
   */
  async withPool<T>(kind: PoolKind, fn: (ctx: Ctx) => Promise<T>, extraEnv: Record<string, string> = {}, processes = PROCESSES, opts: { plain?: boolean; execArgv?: string[] } = {}): Promise<T> {
    const { config, env: given } = this.configFor(kind, extraEnv);
    // as `bulk-register workers` does: the processes take the checked settings (worker-config.ts)
    const env = { ...given, ...workerConfigEnv(config) };
    let ready = 0;
    let allReady: () => void = () => undefined;
    const readyP = new Promise<void>((r) => { allReady = r; });
    const redis = createRedis(config, 'worker');
    await redis.connect();
    // each pool reports its own jobs in flight (a plain pool none), slot by slot; pools can be
    // open side by side (capacity-sequence.ts interleaves the runs of three)
    const concurrency = new Map<number, number>();
    const outerPids = this.workerPids;
    // V8's own defaults (0) in place of the pool's small young generation and slow heap growth
    const heapDefaults = opts.plain ? ['--max-semi-space-size=0', '--heap-growing-percent=0'] : [];
    const pool = new WorkerPool({
      processes, env, shutdownTimeoutMs: 10_000, entry: opts.plain ? PLAIN_WORKER_ENTRY : WORKER_ENTRY,
      // ours reads the pauses as the product's pool does: once for the pool, in its supervisor (steer-relay.ts)
      ...(readsPauses(kind) ? { steering: { redis, ns: namespaceOf(config.queuePrefix) } } : {}),
      // BENCH_WORKER_PROF=<dir>: a V8 CPU profile of each worker process, written there when it stops
      // BENCH_WORKER_FLAGS: V8 flags for every pool's processes (e.g. --trace-gc), space-separated
      execArgv: [...heapDefaults, ...(opts.execArgv ?? []), ...(process.env.BENCH_WORKER_FLAGS?.split(' ').filter(Boolean) ?? []), ...(process.env.BENCH_WORKER_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_PROF}`] : [])],
      log: createLogger({ level: 'warn', pretty: false, name: 'bench-pool' }),
      onMessage: (slot, m) => {
        if (m.type === 'ready' && ++ready === processes) allReady();
        if (m.type === 'events' && m.concurrency !== undefined) concurrency.set(slot, m.concurrency);
        if (m.type === 'events') for (const [event, seller, n] of m.counts) this.events.set(`${event}\t${seller}`, (this.events.get(`${event}\t${seller}`) ?? 0) + n);
      },
    });
    pool.start();
    const connection = bullConnection(config, 'worker');
    const queue = new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix: config.queuePrefix });
    try {
      await Promise.race([readyP, sleep(60_000)]);
      this.workerPids = pool.pids;
      this.redisPids = await Promise.all(redisNodes(redis).map(async (n) => Number(/process_id:(\d+)/.exec(await n.info('server'))?.[1] ?? 0)));
      const inFlight = () => [...concurrency.values()].reduce((a, b) => a + b, 0);
      return await fn({ config, redis, queue, pids: () => pool.pids, inFlight });
    } finally {
      this.workerPids = outerPids;
      this.rssMb = Math.max(this.rssMb, peakRssMb(pool.pids));
      await queue.close();
      connection.disconnect();
      redis.disconnect();
      await pool.stop();
    }
  }

  async waitRegistered(targets: Record<string, number>): Promise<void> {
    const deadline = Date.now() + SCENARIO_TIMEOUT_MS;
    // cheap per-seller reads: the mock API serves requests in this same process
    let waiting = Object.entries(targets);
    for (;;) {
      waiting = waiting.filter(([s, n]) => (this.api.sellerStats(s)?.registered ?? 0) < n);
      if (waiting.length === 0) break;
      if (Date.now() > deadline) {
        const got = Object.fromEntries(waiting.slice(0, 10).map(([s]) => [s, this.api.sellerStats(s) ?? null]));
        throw new Error(`bench: rows not registered within ${SCENARIO_TIMEOUT_MS / 1000} s: wanted ${JSON.stringify(targets).slice(0, 300)}, got ${JSON.stringify(got)}`);
      }
      await sleep(100);
    }
    await sleep(400); // let the workers' last event batches arrive
  }

  times(seller: string): number[] {
    return [...(this.api.sellerStats(seller)?.times ?? [])].sort((a, b) => a - b);
  }

  sellerFigures(seller: string) {
    const s = this.api.sellerStats(seller)!;
    const t = this.times(seller);
    const rows = s.registered;
    const spanMs = t.length > 1 ? t.at(-1)! - t[0]! : 0;
    return {
      registered: s.registered, tooMany: s.tooMany, maxInWindow: s.maxArrivalsInWindow, spanMs, times: t,
      calls: this.count('permit', seller), delays: this.count('delayed', seller), rows,
    };
  }
}

export function scenario(base: Partial<ScenarioResult> & Pick<ScenarioResult, 'name' | 'limiter' | 'rows' | 'sellers'>): ScenarioResult {
  const { name, limiter, rows, sellers, ...rest } = base;
  return {
    name, limiter, rows, sellers, processes: PROCESSES, limit: RULE.limit, windowMs: RULE.windowMs, guardMs: RULE.guardMs,
    registered: 0, tooMany: 0, maxInWindow: 0, spanRatio: null, limiterCallsPerRow: null, delaysPerRow: null,
    redisCommandsPerRow: null, smallSellerMs: null, throughputRatio: null, ...rest,
  };
}

const PRODUCER_ENTRY = fileURLToPath(new URL('./producer-child.js', import.meta.url));

/**
 * A producer, forked, its sheets built and its connection up: `go` starts its
 * uploads. Uploads go from a process of their own, as `bulk-register upload` and
 * the console send them: enqueued in the bench's process, which serves the mock
 * API, a 500-row upload held that process's event loop for 290 ms while the
 * seller's first window was being sent, and the API timed those sends in late
 * batches (bench/producer-child.ts).
 */
export async function startProducer(plan: ProducerPlan): Promise<{ go: () => Promise<ProducerTimes> }> {
  const child = fork(PRODUCER_ENTRY, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  if (process.env.BENCH_PRODUCER_NICE) setPriority(child.pid!, Number(process.env.BENCH_PRODUCER_NICE));
  const failed = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench: the producer exited with ${code}`))));
  failed.catch(() => undefined);
  const next = <T>() => Promise.race([new Promise<T>((r) => child.once('message', (m) => r(m as T))), failed]);
  const ready = next<{ ready: true }>();
  child.send(plan);
  await ready;
  return {
    go: () => {
      const times = next<ProducerTimes>();
      child.send('go');
      return times;
    },
  };
}

/** Runs a bench script's main and exits: 0 when it is done, 1 with one line naming the script when it fails. */
export function runMain(name: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: Error) => {
      process.stderr.write(`${name} failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}
