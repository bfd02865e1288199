/** `bulk-register mock-api [--port P]`: serves the registration API until SIGINT/SIGTERM. */
import { ConfigError, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { MockRegistrationApi, parseLatency, parseLimits } from '../mock-api/server.js';

function rate(name: string, value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`${name}=${JSON.stringify(value)} is invalid: expected a probability from 0 to 1.`);
  return n;
}

export function mockApiFromEnv(config: Config, env: NodeJS.ProcessEnv, log?: Logger): MockRegistrationApi {
  return new MockRegistrationApi({
    limit: config.rateLimitMax,
    windowMs: config.rateLimitWindowMs,
    latencyMs: parseLatency(env.MOCK_LATENCY_MS),
    failRate: rate('MOCK_FAIL_RATE', env.MOCK_FAIL_RATE),
    dropRate: rate('MOCK_DROP_RATE', env.MOCK_DROP_RATE),
    hangRate: rate('MOCK_HANG_RATE', env.MOCK_HANG_RATE),
    invalidCategories: (env.MOCK_INVALID_CATEGORIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    limits: parseLimits(env.MOCK_LIMITS),
    ...(log ? { log } : {}),
  });
}

export async function mockApiCommand(port: number, config: Config, log: Logger): Promise<number> {
  const api = mockApiFromEnv(config, process.env, log);
  const bound = await api.listen(port, process.env.MOCK_API_HOST ?? '127.0.0.1');
  log.info({ port: bound, limit: config.rateLimitMax, windowMs: config.rateLimitWindowMs }, 'mock registration API listening');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await api.close();
  const { totals } = api.statsSnapshot();
  log.info(totals, 'mock registration API stopped');
  return 0;
}
