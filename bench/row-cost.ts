/**
 * What a row costs one worker process and the Redis server in CPU: the default
 * limiter against bare BullMQ (the product's processor with no limiter and no
 * counting) and rate-limiter-flexible (counted as the default's rows are), with
 * nothing else competing for the CPU. One worker process at a fixed concurrency, the
 * mock API answering in 1-3 ms, each run's rows queued while the queue is
 * paused and then released at once. The pool's capacity runs are CPU-bound on a
 * 2-core host, so this is the figure their rows/s follow, without their noise.
 * `node dist/bench/row-cost.js` after a build; ROW_COST_ROUNDS (default 4)
 * interleaved rounds, the kinds' order turned round in every other one;
 * ROW_COST_KINDS (`none`, `sliding-window`, `rate-limiter-flexible`, comma-separated)
 * runs some of them, e.g. one alone to profile its worker. ROW_COST_COMMANDS=1
 * also prints each kind's commands per row (calls and µs, medians of the
 * rounds): where a kind's Redis time goes, scripts' inner commands included.
 * ROW_COST_CLUSTER=1 runs the same on a private 3-master Redis Cluster (one queue,
 * the sellers pinned to its shard as an upload pins them): what a row costs
 * through ioredis's cluster client, with the commands summed over the masters.
 */
import { startCluster } from '../src/dev/redis-cluster.js';
import { freePort, startRedisServer } from '../src/dev/redis-server.js';
import { MockRegistrationApi } from '../src/mock-api/server.js';
import { QueueSet } from '../src/queue.js';
import { enqueueUpload } from '../src/upload/enqueue-upload.js';
import { Bench, bareJobs, cpuMs, median, redisNodes, runMain, sheetOf, sleep, type Ctx } from './harness.js';

const SELLERS = 100;
const ROWS = 50;
const ROUNDS = Math.max(1, Number(process.env.ROW_COST_ROUNDS ?? 4) || 4);
const CONCURRENCY = 16;

type Kind = 'none' | 'sliding-window' | 'rate-limiter-flexible';
/** ROW_COST_KINDS: some of them (e.g. one alone to profile its worker), comma-separated; default all three. */
const KINDS = (process.env.ROW_COST_KINDS?.split(',') ?? ['none', 'sliding-window', 'rate-limiter-flexible']) as Kind[];
type Figures = { cpuUsPerRow: number; redisCpuUsPerRow: number; scriptUsPerRow: number; rowsPerSec: number; commands: Map<string, { calls: number; usec: number }> };
/** ROW_COST_COMMANDS=1: also print, per kind, each command's calls and µs per row (INFO commandstats counts a script's inner commands on their own too). */
const SHOW_COMMANDS = process.env.ROW_COST_COMMANDS === '1';
/** ROW_COST_CLUSTER=1: on a 3-master Redis Cluster instead of one server. */
const CLUSTER = process.env.ROW_COST_CLUSTER === '1';

/** INFO commandstats: calls and µs of every command so far (summed over a cluster's masters). */
async function commandStats(ctx: Ctx): Promise<Map<string, { calls: number; usec: number }>> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const node of redisNodes(ctx.redis)) {
    for (const m of (await node.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)) {
      const seen = stats.get(m[1]!) ?? { calls: 0, usec: 0 };
      stats.set(m[1]!, { calls: seen.calls + Number(m[2]), usec: seen.usec + Number(m[3]) });
    }
  }
  return stats;
}

async function run(bench: Bench, ctx: Ctx, kind: Kind, tag: string): Promise<Figures> {
  const sellers = Array.from({ length: SELLERS }, (_, i) => `${kind}--${tag}${i}`);
  const queues = QueueSet.of(ctx.queue);
  await ctx.queue.pause();
  for (const seller of sellers) {
    const sheet = sheetOf(seller, ROWS);
    if (kind === 'none') {
      await ctx.queue.addBulk(bareJobs(seller, sheet, ctx.config));
    } else {
      await enqueueUpload({ redis: ctx.redis, queues, config: ctx.config, now: Date.now }, seller, sheet);
    }
  }
  const total = SELLERS * ROWS;
  const registered = () => sellers.reduce((n, s) => n + (bench.api.sellerStats(s)?.registered ?? 0), 0);
  const cpu0 = cpuMs(ctx.pids());
  const started = Date.now();
  await ctx.queue.resume();
  const redis0 = cpuMs(bench.redisPids);
  const commands0 = await commandStats(ctx);
  while (registered() < total) await sleep(5);
  const wallMs = Date.now() - started;
  const cpu = cpuMs(ctx.pids()) - cpu0;
  // the last counts and completions, which Redis runs too
  await sleep(300);
  const redisCpu = cpuMs(bench.redisPids) - redis0;
  const commands = new Map([...(await commandStats(ctx))].map(([name, c]) => {
    const before = commands0.get(name) ?? { calls: 0, usec: 0 };
    return [name, { calls: (c.calls - before.calls) / total, usec: (c.usec - before.usec) / total }] as const;
  }).filter(([, c]) => c.calls > 0));
  // Redis's time inside scripts (EVALSHA and EVAL: their inner commands included), µs per row
  const scriptsPerRow = (commands.get('evalsha')?.usec ?? 0) + (commands.get('eval')?.usec ?? 0);
  return {
    cpuUsPerRow: Math.round((cpu * 1000) / total), redisCpuUsPerRow: Math.round((redisCpu * 1000) / total),
    scriptUsPerRow: Math.round(scriptsPerRow * 10) / 10, rowsPerSec: Math.round((total / wallMs) * 1000), commands,
  };
}

async function main(): Promise<void> {
  const server = CLUSTER ? undefined : await startRedisServer();
  const cluster = CLUSTER ? await startCluster() : undefined;
  const api = new MockRegistrationApi({ limit: 100_000, windowMs: 1000, latencyMs: { min: 1, max: 3 } });
  const port = await api.listen(await freePort());
  const bench = new Bench(api, server?.url ?? '', `http://127.0.0.1:${port}`, {
    WORKER_CONCURRENCY: String(CONCURRENCY), ...(cluster ? { REDIS_CLUSTER_NODES: cluster.seeds, QUEUE_SHARDS: '1' } : {}),
  });
  const figures: Record<Kind, Figures[]> = { none: [], 'sliding-window': [], 'rate-limiter-flexible': [] };
  const ROUND_FIGURES = ['cpuUsPerRow', 'redisCpuUsPerRow', 'scriptUsPerRow'] as const;
  try {
    await bench.withPool('by-seller', async (ctx) => {
      // warm both paths first
      for (const kind of KINDS) await run(bench, ctx, kind, 'warm');
      for (let i = 0; i < ROUNDS; i++) {
        const order: Kind[] = i % 2 === 0 ? KINDS : [...KINDS].reverse();
        for (const kind of order) {
          const f = await run(bench, ctx, kind, `r${i}-`);
          figures[kind].push(f);
          process.stdout.write(`round ${i + 1} ${kind.padEnd(21)} worker ${String(f.cpuUsPerRow).padStart(5)} µs CPU/row, Redis ${String(f.redisCpuUsPerRow).padStart(4)} µs CPU/row (${f.scriptUsPerRow} µs in scripts), ${f.rowsPerSec} rows/s\n`);
        }
      }
    }, { QUEUE_PREFIX: '{row-cost}' }, 1);
  } finally {
    await api.close();
    await server?.stop();
    await cluster?.stop();
  }
  const med = (k: Kind, f: typeof ROUND_FIGURES[number]) => median(figures[k].map((x) => x[f]));
  // the rounds slow down as the run goes on (all kinds alike): a ratio is taken within each round, then its median
  const base: Kind = KINDS.includes('none') ? 'none' : KINDS.at(-1)!;
  const ratio = (k: Kind, f: typeof ROUND_FIGURES[number]) => median(figures[k].map((x, i) => x[f] / figures[base][i]![f])).toFixed(3);
  for (const f of ROUND_FIGURES) {
    const what = { cpuUsPerRow: 'worker CPU', redisCpuUsPerRow: 'Redis CPU', scriptUsPerRow: 'Redis time in scripts' }[f];
    const cells = KINDS.map((k) => `${k} ${med(k, f)} µs${k !== base ? ` (${ratio(k, f)}x of ${base}'s, round by round)` : ''}`);
    process.stdout.write(`median ${what} per row: ${cells.join(', ')}\n`);
  }
  if (SHOW_COMMANDS) {
    for (const kind of KINDS) {
      const names = [...new Set(figures[kind].flatMap((f) => [...f.commands.keys()]))];
      const per = (name: string, k: 'calls' | 'usec') => median(figures[kind].map((f) => f.commands.get(name)?.[k] ?? 0));
      const rows = names.map((name) => ({ name, calls: per(name, 'calls'), usec: per(name, 'usec') })).sort((a, b) => b.usec - a.usec);
      process.stdout.write(`${kind}: median per row, command calls / µs\n`);
      for (const r of rows) process.stdout.write(`  ${r.name.padEnd(18)} ${r.calls.toFixed(3).padStart(8)} ${r.usec.toFixed(2).padStart(8)}\n`);
    }
  }
}

runMain('row-cost', main);
