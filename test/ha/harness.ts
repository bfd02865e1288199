/**
 * The failure suite's stage (`npm run test:ha`): a Redis deployment (single or a
 * master, a replica and three Sentinels), the mock API at 150-250 ms, a pool of
 * real worker processes, and three sellers' uploads under a rule of 50 per
 * 12 s, so that the window outlasts a failover (recovery took 2.7-8.3 s). A fault is injected while the
 * first window's rows are being registered; each run reports:
 * - lost: rows the seller was told were enqueued (upload exit 0) that the API never registered;
 * - twice: rows registered twice at the API (409 for a SKU already registered;
 *   an idempotency replay answers 200 and is not a registration);
 * - tooMany: 429s;
 * - recoveryMs: from the fault to the next registration the API admitted, leaving
 *   out those that arrive within IN_FLIGHT_MS of it (granted before the fault:
 *   no Redis could grant anything that soon after one).
 */
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGLISH_HEADERS, buildSheet, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { baseEnv, runCli, startCli, type Running } from '../helpers/cli.js';
import { freePort } from '../helpers/redis-server.js';
import { Cluster } from 'ioredis';
import { namespaceOf } from '../../src/keys.js';
import { homeKey } from '../../src/seller-home.js';

export const LIMIT = 50;
export const WINDOW_MS = 12_000;
/** The sellers, H1..Hn (HA_SELLERS: n, default 3). */
export const SELLERS = Array.from({ length: Number(process.env.HA_SELLERS ?? 3) }, (_, i) => `H${i + 1}`);
export const ROWS = 70;
/** Registrations arriving this soon after the fault were granted before it. */
export const IN_FLIGHT_MS = 300;
/** How many runs a timing-dependent fault gets (HA_RUNS overrides). */
export const RUNS = Number(process.env.HA_RUNS ?? 3);

export interface RunResult {
  case: string;
  run: number;
  enqueued: number;
  registered: number;
  lost: number;
  twice: number;
  tooMany: number;
  recoveryMs: number;
  /** Rows `status` reported as lost (the jobs Redis lost). */
  statusLost: number;
  /** Rows whose count at the end differs from what the API registered (sum over uploads). */
  countMismatch?: number;
  /** After the run: how long SIGTERM took to stop the pool, and processes left 20 s after it. */
  stopMs?: number;
  leftRunning?: number;
  note?: string;
  /** Where the run's pool log is kept. */
  log?: string;
}

interface Stats {
  sellers: Record<string, { registered: number; duplicates: number; tooMany: number; replays: number; times?: number[] }>;
}

export interface Stage {
  env: NodeJS.ProcessEnv;
  pool: Running;
  api: Running;
  stats(): Promise<Stats>;
  /** Uploads a sheet of `rows` new products for `seller`; returns the rows it was told are enqueued (exit 0). */
  upload(seller: string, rows: number): Promise<{ code: number | null; enqueued: number; stderr: string }>;
}

const RESULTS = join(tmpdir(), 'bulk-register-ha.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'bulk-register-ha-'));
/** Each run's pool log, kept after the suite, in a directory per test file (each loads this harness anew): a later run does not overwrite an earlier one's. */
const LOGS = mkdtempSync(join(tmpdir(), 'bulk-register-ha-logs-'));
/** Log directories of earlier suites are removed once they are this old (ms): a suite's own, and the one running beside it, are younger. */
const LOGS_KEPT_MS = 24 * 3600_000;
for (const name of readdirSync(tmpdir())) {
  if (!name.startsWith('bulk-register-ha-logs-')) continue;
  const path = join(tmpdir(), name);
  try {
    if (Date.now() - statSync(path).mtimeMs > LOGS_KEPT_MS) rmSync(path, { recursive: true, force: true });
  } catch {
    // removed by the file running beside this one
  }
}
const logOf = (name: string, run: number) => join(LOGS, `${name}-${run}.log`);
let sheetNo = 0;

export async function waitUntil(what: string, test: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * One run: pool and API up, three uploads, `fault` once 40 rows are registered,
 * then `status --wait` until every upload is done (rows lost count as done).
 * @param fault injects the fault and returns when it began (host ms)
 */
export async function runCase(
  name: string, run: number, redisEnv: Record<string, string>,
  fault: (stage: Stage) => Promise<number>,
  opts: {
    env?: Record<string, string>;
    /** Runs once the pool is up, before the uploads (with the run's QUEUE_PREFIX). */
    beforeUploads?: (env: NodeJS.ProcessEnv) => Promise<void>;
    afterDone?: (stage: Stage) => Promise<Partial<RunResult>>;
  } = {},
): Promise<RunResult> {
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const env = baseEnv({
    ...redisEnv,
    REGISTRATION_API_URL: apiUrl, QUEUE_PREFIX: `{ha-${name}-${run}}`,
    RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW_MS), RATE_LIMIT_GUARD_MS: '500',
    // 4 processes x 2 slots: about 40 rows/s at 200 ms, so the first window's 150 rows take
    // about 4 s and the fault (at 40 registered) lands while rows are being sent
    // (HA_PROCESSES and HA_CONCURRENCY run the suite on a bigger pool)
    WORKER_PROCESSES: process.env.HA_PROCESSES ?? '4', WORKER_CONCURRENCY: process.env.HA_CONCURRENCY ?? '2', SHUTDOWN_TIMEOUT_MS: '5000', LOCK_DURATION_MS: '2000', API_TIMEOUT_MS: '5000',
    ...opts.env,
  });
  const api = startCli(['mock-api', '--port', String(port)], { ...env, MOCK_LATENCY_MS: '150-250' });
  const pool = startCli(['workers'], env);
  try {
    await api.waitFor(/mock registration API listening/);
    await pool.waitFor(/worker process ready/, 60_000);
    const stats = async () => (await (await fetch(`${apiUrl}/_stats?times=1`)).json()) as Stats;
    const stage: Stage = {
      env, pool, api, stats,
      async upload(seller, rows) {
        const file = join(dir, `sheet-${process.pid}-${++sheetNo}.xlsx`);
        writeFileSync(file, await buildSheet(ENGLISH_HEADERS, productRows(sampleProducts(`${seller}-${name}-${run}-${sheetNo}`, rows))));
        const r = await runCli(['upload', file, '--seller', seller, '--json'], env, 60_000);
        const enqueued = r.code === 0 ? (JSON.parse(r.stdout) as { enqueued: number }).enqueued : 0;
        return { code: r.code, enqueued, stderr: r.stderr };
      },
    };
    await opts.beforeUploads?.(env);
    // at most 8 upload processes at once: a hundred at once (HA_SELLERS=100) starved each other
    // past the upload's 60 s on 2 cores
    const uploads: Array<Awaited<ReturnType<Stage['upload']>>> = [];
    const queue = [...SELLERS];
    await Promise.all(Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let s = queue.shift(); s !== undefined; s = queue.shift()) uploads.push(await stage.upload(s, ROWS));
    }));
    for (const u of uploads) if (u.code !== 0) throw new Error(`upload before the fault exited ${u.code}: ${u.stderr}`);
    let enqueued = uploads.reduce((s, u) => s + u.enqueued, 0);
    const registered = async () => Object.values((await stats()).sellers).reduce((s, x) => s + x.registered, 0);
    await waitUntil('40 rows registered', async () => (await registered()) >= 40, 60_000, 20);

    const faultAt = await fault(stage);
    // rows uploaded by the fault itself (the AOF case uploads a fourth seller just before the kill)
    enqueued += (stage as Stage & { extraEnqueued?: number }).extraEnqueued ?? 0;

    // a command-line run fails fast while the master is away (the Sentinels still name the dead one): ask again
    let done = await runCli(['status', '--wait', '--json'], env, 180_000);
    for (const until = Date.now() + 60_000; done.code === 1 && /Cannot reach/.test(done.stderr) && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 500));
      done = await runCli(['status', '--wait', '--json'], env, 180_000);
    }
    if (done.code !== 0) throw new Error(`status --wait exited ${done.code}: ${done.stderr}`);
    const report = JSON.parse(done.stdout) as { uploads: Array<{ sellerId: string; registered: number; duplicate: number; lost?: number }> };
    const s = await stats();
    const all = Object.values(s.sellers);
    const next = Math.min(...all.flatMap((x) => (x.times ?? []).filter((t) => t >= faultAt + IN_FLIGHT_MS)));
    const result: RunResult = {
      case: name, run,
      enqueued,
      registered: all.reduce((n, x) => n + x.registered, 0),
      lost: Math.max(0, enqueued - all.reduce((n, x) => n + x.registered, 0)),
      twice: all.reduce((n, x) => n + x.duplicates, 0),
      tooMany: all.reduce((n, x) => n + x.tooMany, 0),
      recoveryMs: Number.isFinite(next) ? next - faultAt : -1,
      log: logOf(name, run),
      statusLost: report.uploads.reduce((n, u) => n + (u.lost ?? 0), 0),
      countMismatch: SELLERS.reduce((n, seller) => {
        const counted = report.uploads.filter((u) => u.sellerId === seller).reduce((m, u) => m + u.registered + u.duplicate, 0);
        return n + Math.abs(counted - (s.sellers[seller]?.registered ?? 0));
      }, 0),
      ...(opts.afterDone ? await opts.afterDone(stage) : {}),
    };
    appendFileSync(RESULTS, `${JSON.stringify(result)}\n`);
    console.log(`[ha] ${JSON.stringify(result)}`);
    return result;
  } finally {
    writeFileSync(logOf(name, run), pool.output());
    await pool.stop('SIGKILL');
    await api.stop();
  }
}

/**
 * A pause of sends the pool logged (pino JSON lines whose message holds `text`), if any:
 * when it was first logged and the latest `suspectUntil` (ms since the epoch).
 */
export function loggedPause(output: string, text: string): { loggedAt: number; until: number } | undefined {
  const logged = output.split('\n').filter((l) => l.includes(text))
    .map((l) => JSON.parse(l.slice(l.indexOf('{'))) as { time: number; suspectUntil: number });
  if (logged.length === 0) return undefined;
  return { loggedAt: Math.min(...logged.map((x) => x.time)), until: Math.max(...logged.map((x) => x.suspectUntil)) };
}

export function cleanUp(): void {
  rmSync(dir, { recursive: true, force: true });
}

/** One line per case for the README: the worst of its runs. */
export function summary(results: RunResult[]): string {
  const max = (k: keyof RunResult) => Math.max(...results.map((r) => Number(r[k])));
  const rec = results.map((r) => r.recoveryMs);
  return `${results[0]?.case}: ${results.length} runs, lost ${max('lost')}, twice ${max('twice')}, 429 ${max('tooMany')}, recovery ${Math.min(...rec)}-${Math.max(...rec)} ms, status lost ${max('statusLost')}`;
}

/**
 * Pins SELLERS one per master of a 3-master cluster (queue shards 0, 2 and 4 of `prefixes`), as a
 * pool's many sellers spread: H1..H3 would hash to shards of one master. Fills `pins` with each one's.
 */
export async function pinOnePerMaster(port: number, queuePrefix: string, prefixes: readonly string[], pins: Map<string, string>): Promise<void> {
  const c = new Cluster([{ host: '127.0.0.1', port }]);
  try {
    for (const [i, seller] of SELLERS.entries()) {
      pins.set(seller, prefixes[(2 * i) % prefixes.length]!);
      await c.set(homeKey(namespaceOf(queuePrefix), seller), pins.get(seller)!);
    }
  } finally {
    c.disconnect();
  }
}
