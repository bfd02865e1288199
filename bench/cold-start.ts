/**
 * `npm run bench:cold`: a fresh pool, as an acceptance run or a pool just deployed
 * meets it, with no warm-up. 120 sellers x 50 rows (and the 7-row seller 1 s later)
 * at 150-250 ms answers, on 16 processes started just before; then the same again
 * on the same pool, COLD_RUNS runs in all (default 3). The default limiter at
 * WORKER_CONCURRENCY auto, then bare BullMQ on a fresh pool of its own, fixed at the
 * most the default had in flight (÷ the processes, rounded up), as an acceptance run
 * sizes it; COLD_ROUNDS rounds (default 3; the medians below take the upper
 * middle of an even count, so the rounds' own ratios are printed beside them). Redis and the mock API get no
 * scheduling help (the bench's capacity runs give Redis SCHED_FIFO; COLD_RT=1 does
 * the same here). Prints each run's rows/s and worker CPU per row, and the
 * default's ÷ bare's run by run: how far a fresh pool's first rows fall behind a
 * warm pool's, where the bench's capacity figures are taken.
 * COLD_FLAGS: V8 flags for the default's processes, `|`-separated variants run one
 * after another in each round (e.g. `|--always-sparkplug`; an empty variant: none).
 * COLD_ONLY, COLD_PER_PROCESS and COLD_PREWARM: see docs/configuration.md.
 */
import { freePort, startRedisServer } from '../src/dev/redis-server.js';
import { MockRegistrationApi } from '../src/mock-api/server.js';
import { Bench, PROCESSES, RULE, median, round, say, withRealtimeRedis, type Ctx } from './harness.js';
import { CAPACITY, capacityRun } from './scenarios/capacity.js';

const ROUNDS = Math.max(1, Number(process.env.COLD_ROUNDS ?? 3) || 3);
const RUNS = Math.max(1, Number(process.env.COLD_RUNS ?? 3) || 3);
const SELLERS = 120;
const VARIANTS = (process.env.COLD_FLAGS ?? '').split('|').map((v) => v.split(' ').filter(Boolean));
const REALTIME = process.env.COLD_RT === '1';
/** COLD_ONLY: `default` or `bare` alone (e.g. to profile it with BENCH_WORKER_PROF); bare alone runs at COLD_PER_PROCESS jobs a process. */
const ONLY = process.env.COLD_ONLY;
/** COLD_PREWARM: sellers of a run on each fresh pool before its measured runs (unmeasured). */
const PREWARM = Number(process.env.COLD_PREWARM ?? 0) || 0;

type Run = { rowsPerSec: number; cpuUsPerRow: number; inFlight: number };
/** Each pool's runs, in order, by the pool's name. */
const pools = new Map<string, Run[][]>();

async function poolRuns(bench: Bench, api: MockRegistrationApi, ctx: Ctx, name: string, limiter: 'sliding-window' | 'bare', tag: string): Promise<Run[]> {
  const measure = async () => {
    const runs: Run[] = [];
    if (PREWARM > 0) await capacityRun(bench, api, ctx, { limiter, sellerKind: limiter === 'bare' ? 'none' : limiter, tag: `${tag}pw-`, sellers: PREWARM });
    for (let i = 0; i < RUNS; i++) {
      const { result } = await capacityRun(bench, api, ctx, { limiter, sellerKind: limiter === 'bare' ? 'none' : limiter, tag: `${tag}${i}-`, sellers: SELLERS });
      runs.push({ rowsPerSec: result.rowsPerSec!, cpuUsPerRow: result.workerCpuUsPerRow!, inFlight: result.concurrency ?? 0 });
    }
    return runs;
  };
  const runs = REALTIME ? await withRealtimeRedis(bench.redisPids, measure) : await measure();
  pools.set(name, [...(pools.get(name) ?? []), runs]);
  say(`  ${name}: ${runs.map((r) => `${r.rowsPerSec} rows/s (${r.cpuUsPerRow} µs worker CPU a row, ${r.inFlight} in flight)`).join(', then ')}`);
  return runs;
}

const redis = await startRedisServer();
const api = new MockRegistrationApi({ limit: RULE.limit, windowMs: RULE.windowMs, latencyMs: CAPACITY.latencyMs });
const port = await api.listen(await freePort());
const bench = new Bench(api, redis.url, `http://127.0.0.1:${port}`);
try {
  say(`bench:cold: ${SELLERS} sellers x ${CAPACITY.rows} rows at ${CAPACITY.latencyMs.min}-${CAPACITY.latencyMs.max} ms, ${PROCESSES} fresh processes, ${RUNS} runs a pool, ${ROUNDS} rounds${REALTIME ? ', Redis at SCHED_FIFO' : ''}`);
  for (let r = 0; r < ROUNDS; r++) {
    let perProcess = Number(process.env.COLD_PER_PROCESS ?? 1) || 1;
    const variants = VARIANTS.map((flags, i) => ({ flags, i }));
    for (const { flags, i } of ONLY === 'bare' ? [] : r % 2 === 1 ? variants.reverse() : variants) {
      const name = `default${flags.length > 0 ? ` ${flags.join(' ')}` : ''}`;
      const runs = await bench.withPool('sliding-window', (ctx) => poolRuns(bench, api, ctx, name, 'sliding-window', `r${r}v${i}-`), {}, PROCESSES, { execArgv: flags });
      perProcess = Math.max(perProcess, ...runs.map((x) => Math.ceil(x.inFlight / PROCESSES)));
    }
    if (ONLY !== 'default') await bench.withPool('none', (ctx) => poolRuns(bench, api, ctx, 'bare', 'bare', `r${r}b-`), { WORKER_CONCURRENCY: String(perProcess) });
  }
  const bare = pools.get('bare') ?? [];
  for (const [name, rounds] of pools) {
    const byRun = Array.from({ length: RUNS }, (_, i) => {
      const rowsPerSec = round(median(rounds.map((runs) => runs[i]!.rowsPerSec)), 1);
      const cpu = round(median(rounds.map((runs) => runs[i]!.cpuUsPerRow)), 0);
      // with COLD_ONLY=default there is no bare pool to divide by
      const ratios = bare.length === 0 ? [] : rounds.map((runs, k) => runs[i]!.rowsPerSec / bare[k]![i]!.rowsPerSec);
      const ratio = name === 'bare' || ratios.length === 0 ? '' : `, ÷ bare ${median(ratios).toFixed(3)} (${ratios.map((x) => x.toFixed(3)).join(', ')})`;
      return `run ${i + 1}: ${rowsPerSec} rows/s, ${cpu} µs CPU a row${ratio}`;
    });
    say(`${name} (medians of ${rounds.length} pools, run by run): ${byRun.join('; ')}`);
  }
} finally {
  await api.close();
  await redis.stop();
}
