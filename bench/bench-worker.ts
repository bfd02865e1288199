/**
 * A pool worker process for the bench: the product's worker with the limiter named
 * by BENCH_LIMITER, and BullMQ's queue-wide limiter when BENCH_QUEUE_LIMITER
 * (`max/durationMs`) is set.
 */
import type { Config } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { WORKER_CONFIG_ENV } from '../src/worker/worker-config.js';
import { runWorkerProcess } from '../src/worker/worker-process.js';
import { loadPeers, makeLimiter, readsPauses, type LimiterKind } from './alt-limiters.js';
import { traceGrants } from './grant-trace.js';

const kind = (process.env.BENCH_LIMITER ?? 'sliding-window') as LimiterKind | 'by-seller';
// the settings the bench checked, as the product's pool hands them over (worker-main.ts)
const config = JSON.parse(process.env[WORKER_CONFIG_ENV]!) as Config;
const [max, duration] = (process.env.BENCH_QUEUE_LIMITER ?? '').split('/').map(Number);
const queueLimiter = max && duration ? { max, duration } : undefined;
const log = createLogger({ level: config.logLevel, pretty: false, name: 'worker' });
// BENCH_DEBUG: the bench names a directory for the grants' trace (grant-trace.ts)
const traceDir = process.env.BENCH_GRANT_TRACE;
await loadPeers(kind);
runWorkerProcess(config, log, {
  makeLimiter: (redis, settings) => (traceDir ? traceGrants(makeLimiter(kind, redis, settings), traceDir) : makeLimiter(kind, redis, settings)),
  queueLimiter,
  pauses: readsPauses(kind),
}).catch((err: Error) => {
  log.error({ err }, 'bench worker failed');
  process.exit(1);
});
