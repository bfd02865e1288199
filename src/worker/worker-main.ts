/** Entry point of one pool worker process (forked by the supervisor). */
import type { Config } from '../config.js';
import { createLogger } from '../logger.js';
import { runWorkerProcess } from './worker-process.js';
import { WORKER_CONFIG_ENV } from './worker-config.js';

// Test hook: CLOCK_OFFSET_MS shifts this process's clock (Date.now), as a skewed host's would be.
const offset = Number(process.env.CLOCK_OFFSET_MS ?? 0);
if (Number.isFinite(offset) && offset !== 0) {
  const realNow = Date.now.bind(Date);
  Date.now = () => realNow() + offset;
}

let config: Config;
try {
  // the pool's own checked settings; started by hand (no pool), the environment is checked here
  const given = process.env[WORKER_CONFIG_ENV];
  config = given ? (JSON.parse(given) as Config) : (await import('../config.js')).loadConfig();
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
const log = createLogger({ level: config.logLevel, pretty: config.logPretty, name: 'worker' });
runWorkerProcess(config, log).catch((err: Error) => {
  log.error({ err }, 'worker process failed');
  process.exit(1);
});
