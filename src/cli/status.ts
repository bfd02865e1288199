/** `bulk-register status [--upload <id>] [--seller <id>] [--wait] [--json]` */
import { safeText } from './exit.js';
import type { Config } from '../config.js';
import { formatDuration, formatWindow } from '../progress/eta.js';
import { noPool, readStatus, statusJson, type StatusReport } from '../progress/status.js';
import { failingByUpload } from '../steering/outage.js';
import { ReplyError } from 'ioredis';
import { connectChecked, createRedis, RedisUnavailable } from '../redis.js';
import { EXIT, UsageError } from './exit.js';
import { SELLER_ID } from '../keys.js';
import { watchStatus } from './status-watch.js';

export interface StatusFlags {
  upload?: string;
  seller?: string;
  wait?: boolean;
  watch?: boolean;
  json?: boolean;
  intervalMs?: number;
}

export async function statusCommand(flags: StatusFlags, config: Config): Promise<number> {
  if (flags.seller !== undefined && !SELLER_ID.test(flags.seller)) {
    throw new UsageError(`seller ${JSON.stringify(flags.seller)} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -`);
  }
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  // --wait outlives a failover: it reads on a connection that waits for Redis,
  // each read bounded, and gives up only after RETRY_FOR_MS of failures
  let waiting: typeof redis | undefined;
  try {
    const filter = { uploadId: flags.upload, sellerId: flags.seller };
    const read = async () => {
      if (!flags.wait) return readStatus(redis, config, filter);
      if (!waiting) {
        waiting = createRedis(config, 'worker');
        waiting.connect().catch(() => undefined);
      }
      const client = waiting;
      return retryRedis(() => withTimeout(readStatus(client, config, filter), READ_TIMEOUT_MS));
    };
    let report = await read();
    // a seller paused before its first upload is known (its pause is shown)
    if ((flags.upload || flags.seller) && report.uploads.length === 0 && (flags.upload !== undefined || report.sellers.length === 0)) {
      const what = flags.upload ? `upload ${flags.upload}` : `seller ${flags.seller}`;
      process.stderr.write(`No ${what} is known (it may have expired): check the id with \`bulk-register status\`.\n`);
      return EXIT.failure;
    }
    if (flags.watch) {
      const last = await watchStatus(redis, config, filter, { untilDone: Boolean(flags.wait) });
      return flags.wait ? waitEnded(last) : EXIT.ok;
    }
    if (flags.wait) {
      let stop = false;
      const onSignal = () => { stop = true; };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      while (!stop && report.uploads.some((u) => !u.done)) {
        await new Promise((r) => setTimeout(r, flags.intervalMs ?? 1000));
        report = await read();
      }
    }
    process.stdout.write(flags.json ? `${JSON.stringify(statusJson(report))}\n` : formatStatus(report));
    return flags.wait ? waitEnded(report) : EXIT.ok;
  } finally {
    redis.disconnect();
    waiting?.disconnect();
  }
}

/**
 * --wait ends in success only with every chosen upload done: stopped by a signal
 * before that, it says so and fails, so that `status --wait && next-step` (or a
 * `timeout` around it) does not go on as if the rows were finished.
 */
function waitEnded(report: StatusReport | undefined): number {
  const unfinished = report?.uploads.filter((u) => !u.done) ?? [];
  if (report !== undefined && unfinished.length === 0) return EXIT.ok;
  const pending = unfinished.reduce((n, u) => n + u.pending, 0);
  process.stderr.write(`Stopped before the uploads finished: ${unfinished.length} upload${unfinished.length === 1 ? '' : 's'} still running, ${pending} row${pending === 1 ? '' : 's'} pending.\n`);
  return EXIT.failure;
}

/** How long --wait keeps retrying a Redis that fails (a failover takes seconds), in ms. */
export const RETRY_FOR_MS = 60_000;
const READ_TIMEOUT_MS = 10_000;

class ReadTimeout extends Error {
  override readonly name = 'ReadTimeout';
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new ReadTimeout(`no answer from Redis within ${ms} ms`)), ms); })])
    .finally(() => clearTimeout(timer));
}

/** `fn`, retried every 500 ms while Redis fails (not for other errors), for at most RETRY_FOR_MS. */
async function retryRedis<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      const redisError = err instanceof ReplyError || err instanceof ReadTimeout || /Cluster|connect|Connection|ECONN|MOVED|CLUSTERDOWN|TRYAGAIN|LOADING/i.test((err as Error).message);
      if (!redisError || Date.now() > deadline) {
        if (redisError) throw new RedisUnavailable(`Redis kept failing for ${RETRY_FOR_MS / 1000} s (${(err as Error).message.split('\n')[0]}): check that it is up.`);
        throw err;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export function formatStatus(report: StatusReport): string {
  if (report.uploads.length === 0 && report.sellers.length === 0) return 'No uploads yet.\n';
  const lines: string[] = [];
  if (report.api && !report.api.available) {
    lines.push(`the registration API is unavailable since ${new Date(report.api.since).toISOString()}: rows are held (no attempt used) and the pool probes every 2 s`);
    const failing = [...failingByUpload(report.api.failing ?? [])];
    if (failing.length > 0) lines.push(`  latest calls without an answer: ${failing.map(([id, rows]) => `upload ${id} row${rows.length > 1 ? 's' : ''} ${rows.join(', ')}`).join('; ')}`);
  }
  const apiDown = report.api !== undefined && !report.api.available;
  const idle = noPool(report);
  if (idle) lines.push('no worker pool is running: pending rows wait until `bulk-register workers` starts');
  else if (report.pool && report.pool.up < report.pool.expected) lines.push(`worker pool: ${report.pool.up} of ${report.pool.expected} processes up`);
  for (const s of report.sellers) {
    const uploads = report.uploads.filter((x) => x.sellerId === s.sellerId);
    const next = s.nextPermitInMs > 0 ? `next permit in ${formatDuration(s.nextPermitInMs)}` : 'permit free now';
    const rule = `${s.limit} per ${formatWindow(s.windowMs)}${s.ruleSource === 'api' ? ' as the marketplace announced' : s.ruleSource === 'override' ? ' set by the operator' : ''}`;
    if (s.paused) {
      const by = s.paused.by === 'credentials' ? 'paused' : 'paused by the operator';
      lines.push(`seller ${s.sellerId}  (${rule}; ${by}: ${safeText(s.paused.reason)}; ETA unknown until resumed)`);
    } else {
      const pending = uploads.some((u) => !u.done && u.pending > 0);
      const eta = apiDown && pending ? 'ETA unknown while the API is unavailable'
        : idle && pending ? 'ETA unknown until a worker pool runs'
        : `ETA ${formatDuration(s.etaMs)}${s.etaMs > 0 ? `, paced by ${s.pace === 'pool' ? 'the pool (rows wait for a worker)' : 'its rule'}` : ''}`;
      lines.push(`seller ${s.sellerId}  (${rule}, ${next}, ${s.waitingForPermit} waiting for a permit, ${s.inProgress} in progress, ${eta})`);
    }
    // a seller paused on its own before its first upload (or after its last expired)
    if (uploads.length === 0) lines.push('  no uploads');
    for (const u of uploads) {
      const finished = u.registered + u.duplicate + u.failed + u.cancelled;
      const pct = u.total > 0 ? Math.floor((finished * 100) / u.total) : 100;
      lines.push(
        `  upload ${u.uploadId}  ${u.cancelledAt !== undefined ? 'cancelled' : u.done ? 'done' : `${pct}%`}  total ${u.total}  registered ${u.registered}  duplicate ${u.duplicate}  failed ${u.failed}${u.cancelled ? `  cancelled ${u.cancelled}` : ''}  pending ${u.pending}${u.lost ? `  lost ${u.lost} (Redis lost their jobs: upload them again)` : ''}${u.invalid ? `  (invalid at upload: ${u.invalid})` : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
