/**
 * `bulk-register mock-api [--marketplace] [--port P]`: serves the registration
 * API (registration-api.md), or with --marketplace the marketplace stand-in
 * (mock-api/marketplace.ts), until SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { cannotListen } from './exit.js';
import { MockRegistrationApi, parseLatency, parseLimits } from '../mock-api/server.js';
import { MockMarketplace, type MarketplaceClient } from '../mock-api/marketplace.js';

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
    pathLatencyMs: parseLatency(env.MOCK_PATH_LATENCY_MS, 'MOCK_PATH_LATENCY_MS'),
    failRate: rate('MOCK_FAIL_RATE', env.MOCK_FAIL_RATE),
    dropRate: rate('MOCK_DROP_RATE', env.MOCK_DROP_RATE),
    hangRate: rate('MOCK_HANG_RATE', env.MOCK_HANG_RATE),
    invalidCategories: (env.MOCK_INVALID_CATEGORIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    failCategories: (env.MOCK_FAIL_CATEGORIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    limits: parseLimits(env.MOCK_LIMITS),
    ...(log ? { log } : {}),
  });
}

/** The stand-in's clients when MOCK_MARKETPLACE_CLIENTS names no file: S1..S3, `demo-S1` / `demo-secret-S1`, ... */
export const DEMO_MARKETPLACE_CLIENTS: Record<string, MarketplaceClient> = Object.fromEntries(
  ['S1', 'S2', 'S3'].map((id) => [id, { clientId: `demo-${id}`, clientSecret: `demo-secret-${id}` }]),
);

/**
 * The marketplace stand-in from the environment: clients from the JSON file
 * MOCK_MARKETPLACE_CLIENTS (`{ "<sellerId>": { "clientId", "clientSecret" } }`),
 * the rule from RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_MS and MOCK_LIMITS, and
 * MOCK_LATENCY_MS, MOCK_PATH_LATENCY_MS, MOCK_INVALID_CATEGORIES, MOCK_TOKEN_LIFETIME_MS.
 * @throws ConfigError naming the variable.
 */
export function marketplaceFromEnv(config: Config, env: NodeJS.ProcessEnv, log?: Logger): MockMarketplace {
  const file = env.MOCK_MARKETPLACE_CLIENTS?.trim();
  let clients = DEMO_MARKETPLACE_CLIENTS;
  if (file) {
    const shown = `MOCK_MARKETPLACE_CLIENTS=${JSON.stringify(file)}`;
    try {
      clients = JSON.parse(readFileSync(file, 'utf8')) as Record<string, MarketplaceClient>;
    } catch (err) {
      throw new ConfigError(`${shown} is invalid: ${(err as Error).message.split('\n')[0]}.`);
    }
    if (typeof clients !== 'object' || clients === null || Array.isArray(clients)) {
      throw new ConfigError(`${shown} is invalid: expected a JSON object { "<sellerId>": { "clientId", "clientSecret" } }.`);
    }
  }
  const lifetime = env.MOCK_TOKEN_LIFETIME_MS?.trim();
  if (lifetime && (!/^\d+$/.test(lifetime) || Number(lifetime) < 1000)) {
    throw new ConfigError(`MOCK_TOKEN_LIFETIME_MS=${JSON.stringify(lifetime)} is invalid: expected a whole number of ms of at least 1000.`);
  }
  try {
    return new MockMarketplace({
      clients,
      rule: { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs },
      sellerRules: parseLimits(env.MOCK_LIMITS),
      latencyMs: parseLatency(env.MOCK_LATENCY_MS),
      invalidCategories: (env.MOCK_INVALID_CATEGORIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      ...(lifetime ? { tokenLifetimeMs: Number(lifetime) } : {}),
      ...(log ? { log } : {}),
    });
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    const variable = err.message.startsWith('sellerRules') ? 'MOCK_LIMITS' : `MOCK_MARKETPLACE_CLIENTS=${JSON.stringify(file)}`;
    throw new ConfigError(`${variable} is invalid: ${err.message}.`);
  }
}

export async function mockApiCommand(port: number, config: Config, log: Logger, opts: { marketplace?: boolean } = {}): Promise<number> {
  const api = opts.marketplace ? marketplaceFromEnv(config, process.env, log) : mockApiFromEnv(config, process.env, log);
  const what = opts.marketplace ? 'mock marketplace' : 'mock registration API';
  const host = process.env.MOCK_API_HOST ?? '127.0.0.1';
  let bound: number;
  try {
    bound = await api.listen(port, host);
  } catch (err) {
    throw cannotListen(err, what, host, port, ', or another MOCK_API_HOST');
  }
  log.info({ port: bound, limit: config.rateLimitMax, windowMs: config.rateLimitWindowMs }, `${what} listening`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await api.close();
  if (api instanceof MockRegistrationApi) log.info(api.statsSnapshot().totals, `${what} stopped`);
  else {
    const totals = { tokensIssued: 0, registered: 0, tooMany: 0 };
    for (const s of Object.values(api.stats().sellers)) for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += s[k];
    log.info(totals, `${what} stopped`);
  }
  return 0;
}
