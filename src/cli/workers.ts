/** `bulk-register workers [--processes N] [--concurrency C]`: runs the pool until SIGINT/SIGTERM. */
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { WorkerPool } from '../worker/supervisor.js';

export async function workersCommand(config: Config, log: Logger): Promise<number> {
  const pool = new WorkerPool({
    processes: config.workerProcesses,
    env: {
      ...process.env,
      WORKER_PROCESSES: String(config.workerProcesses),
      WORKER_CONCURRENCY: String(config.workerConcurrency),
      ...(config.logPretty !== undefined ? {} : { LOG_PRETTY: process.stdout.isTTY ? '1' : '0' }),
    },
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    log,
  });
  pool.start();
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      log.info({ signal }, 'stopping the worker pool: no new jobs, finishing the ones in hand');
      resolve();
    };
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
  });
  await pool.stop();
  log.info('worker pool stopped');
  return 0;
}
