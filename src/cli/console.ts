/**
 * `bulk-register console [--port P]`: the web console (console.md) until SIGINT/SIGTERM.
 * `bulk-register console link --seller <id> [--ttl <duration>]`: a signed seller link.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Config } from '../config.js';
import { isLoopbackHost, parseTtl, signSellerToken } from '../console/access.js';
import { ConsoleRefused } from '../console/errors.js';
import type { IntakeBounds } from '../console/intake.js';
import { LiveFeed } from '../console/live.js';
import { createConsoleApp } from '../console/server.js';
import { SnapshotReader, type ConsoleSnapshot } from '../console/snapshot.js';
import { SELLER_ID } from '../keys.js';
import type { Logger } from '../logger.js';
import { QueueSet, resolveShardPrefixes } from '../queue.js';
import { connectService } from './service-redis.js';
import { bullConnection } from '../redis.js';
import { EXIT, UsageError } from './exit.js';

/** ms between the shared reader's snapshots while any page is open */
export const LIVE_INTERVAL_MS = 1000;

export interface RunningConsole {
  url: string;
  port: number;
  feed: LiveFeed<ConsoleSnapshot>;
  close: () => Promise<void>;
}

/**
 * Starts the console on `config.console` (or `port`), with its own Redis
 * connections, which wait for Redis as the workers do.
 * @throws ConsoleRefused on a non-loopback host with no operator token, or when the port is taken
 */
export async function startConsole(config: Config, log: Logger, opts: { port?: number; strict?: boolean; redisWaitMs?: number; intake?: IntakeBounds } = {}): Promise<RunningConsole> {
  const { host, operatorToken } = config.console;
  if (!isLoopbackHost(host) && operatorToken === '') {
    throw new ConsoleRefused(
      `CONSOLE_HOST=${host} is reachable from other machines, but CONSOLE_OPERATOR_TOKEN is not set: set a long random token, or bind to 127.0.0.1.`,
    );
  }
  const redis = await connectService(config, log, { strict: opts.strict });
  const connection = bullConnection(config, 'worker');
  connection.on('error', () => undefined);
  // the shards are counted once Redis answers (a cluster's masters)
  const queues = QueueSet.on(connection, () => resolveShardPrefixes(config, redis as never));
  const reader = new SnapshotReader(redis, config);
  const feed = new LiveFeed<ConsoleSnapshot>({
    read: () => reader.read(),
    intervalMs: LIVE_INTERVAL_MS,
    onError: (err) => log.warn({ err }, 'console could not read the status from Redis'),
  });
  const app = createConsoleApp({ redis, queues, config, log, reader, feed, now: Date.now, ...(opts.redisWaitMs !== undefined ? { redisWaitMs: opts.redisWaitMs } : {}), ...(opts.intake ? { intake: opts.intake } : {}) });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? config.console.port, hostname: host }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) => {
      reject(new ConsoleRefused(err.code === 'EADDRINUSE' ? `port ${opts.port ?? config.console.port} on ${host} is taken: set CONSOLE_PORT or --port to a free one.` : `the console cannot listen on ${host}: ${err.message}.`));
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}`;
  return {
    url,
    port,
    feed,
    close: async () => {
      feed.close();
      // open SSE streams would hold server.close() forever
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.race([queues.close(), new Promise((r) => setTimeout(r, 2000).unref())]);
      connection.disconnect();
      redis.disconnect();
    },
  };
}

/** Shorter than this, a token or signing key can be guessed by trying (it guards every seller's data). */
export const MIN_SECRET_CHARS = 16;

/** A warning for each of the console's secrets that is set but short; the values themselves are never named. */
export function shortSecretWarnings(settings: Config['console']): string[] {
  return ([['CONSOLE_OPERATOR_TOKEN', settings.operatorToken], ['CONSOLE_SECRET', settings.secret]] as const)
    .filter(([, value]) => value !== '' && value.length < MIN_SECRET_CHARS)
    .map(([name, value]) => `${name} is only ${value.length} character${value.length === 1 ? '' : 's'} long, short enough to be guessed: set a random one of ${MIN_SECRET_CHARS} or more (for example \`openssl rand -hex 32\`)`);
}

export async function consoleCommand(config: Config, log: Logger, opts: { port?: number; strict?: boolean }): Promise<number> {
  const running = await startConsole(config, log, opts);
  const access = config.console.operatorToken === ''
    ? 'operator access is open to this machine (no CONSOLE_OPERATOR_TOKEN, loopback host)'
    : 'operator access needs CONSOLE_OPERATOR_TOKEN: open /ops?token=<token> once';
  log.info({ url: running.url }, `console listening on ${running.url}: operator page ${running.url}/ops; ${access}`);
  if (config.console.secret === '') log.warn('CONSOLE_SECRET is not set: seller links are off (set it, then `bulk-register console link --seller <id>`)');
  for (const warning of shortSecretWarnings(config.console)) log.warn(warning);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await running.close();
  log.info('console stopped');
  return EXIT.ok;
}

/** The base URL seller links point at. */
export function consoleBaseUrl(config: Config): string {
  if (config.console.publicUrl) return config.console.publicUrl;
  const { host, port } = config.console;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

export function consoleLinkCommand(config: Config, flags: { seller: string; ttl?: string }): number {
  if (!SELLER_ID.test(flags.seller)) {
    throw new UsageError(`--seller ${JSON.stringify(flags.seller)} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -`);
  }
  const ttlText = flags.ttl ?? '7d';
  const ttlMs = parseTtl(ttlText);
  if (ttlMs === undefined) throw new UsageError(`--ttl ${JSON.stringify(ttlText)} is invalid: expected a duration such as 90s, 30m, 12h or 7d, at most 366d`);
  if (config.console.secret === '') {
    throw new ConsoleRefused('CONSOLE_SECRET is not set: seller links are signed with it; set it (the same value for the console) and run this again.');
  }
  const expiresAt = Date.now() + ttlMs;
  const token = signSellerToken(config.console.secret, flags.seller, expiresAt);
  process.stdout.write(`${consoleBaseUrl(config)}/s/${token}\n`);
  process.stderr.write(`seller ${flags.seller}: valid until ${new Date(Math.floor(expiresAt / 1000) * 1000).toISOString()}\n`);
  return EXIT.ok;
}
