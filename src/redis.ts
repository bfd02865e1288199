/**
 * Redis connections (single node, Sentinel or cluster), each with the project's
 * Lua commands defined on it (lua-commands.ts).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from './config.js';
import { databaseInUrl } from './redis-url.js';
import { maskUrl } from './mask-url.js';
import { defineCommands, type LuaCommands } from './lua-commands.js';
import { RedisUnavailable, refusedCredentials, refusedCredentialsSentence } from './redis-errors.js';
import { followSwitches, letGoOnSwitch } from './sentinel-switch.js';
import { REDIS_WAIT_NOTICE_MS, noticeSlowAnswers } from './redis-wait-notice.js';

export type RedisClient = (Redis | Cluster) & LuaCommands;

export type ConnectionPurpose =
  /** a command-line run: fail fast when Redis is not there */
  | 'cli'
  /** a long-lived worker: wait and retry for as long as Redis is away (BullMQ needs maxRetriesPerRequest null) */
  | 'worker';

export function redisOptions(purpose: ConnectionPurpose): RedisOptions {
  const base: RedisOptions = {
    lazyConnect: true,
    connectionName: `bulk-register:${purpose}`,
  };
  if (purpose === 'cli') {
    return {
      ...base,
      connectTimeout: 3000,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      retryStrategy: (times) => (times > 2 ? null : 200),
    };
  }
  return {
    ...base,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(200 * times, 2000),
  };
}

/**
 * Holds a single-node connection's writes until this turn of the event loop
 * ends: the commands issued meanwhile leave in one write, Redis reads them in
 * one read and answers them in one write. Order is kept. On a busy host a
 * socket write and its read cost Redis and the worker about as much as the
 * count's script does (docs/how-it-works.md, "The limiter"). `last`, if given,
 * issues commands that must follow all of them (the next row's permit after
 * BullMQ's completion of this one); it is told how many `last`s this write
 * carries and its own place among them, in the order they were asked for (a
 * permit asked ahead then knows how many fetches went before and after its own).
 * On a cluster every master's connection is held: the commands for one slot
 * still leave in their order, each node's in one write.
 */
export function writeTogether(client: Redis | Cluster, last?: (together: number, position: number) => void): void {
  const holder: object | undefined = client instanceof Redis ? client.stream : client;
  if (!holder) return;
  const pending = lastCommands.get(holder);
  if (pending) {
    if (last) pending.push(last);
    return;
  }
  const sockets = (client instanceof Redis ? [client.stream] : client.nodes('master').map((node) => node.stream))
    .filter((socket) => socket && socket.writableCorked === 0);
  if (client instanceof Redis && sockets.length === 0) return;
  const lasts = last ? [last] : [];
  lastCommands.set(holder, lasts);
  for (const socket of sockets) socket.cork();
  setImmediate(() => {
    lastCommands.delete(holder);
    // issued now, after every command of this turn: they join the same write
    lasts.forEach((issue, position) => issue(lasts.length, position));
    for (const socket of sockets) socket.uncork();
  });
}

/** Redis's TIME reply ([seconds, microseconds]) in whole milliseconds. */
export function redisTimeMs([seconds, micros]: ReadonlyArray<string | number>): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * Releases a lock taken with SET NX PX by `holder`, only if it still holds it: one
 * atomic compare-and-delete (a lock that expired and was taken by another is left to it).
 */
export async function releaseLock(client: Redis | Cluster, key: string, holder: string): Promise<void> {
  await client.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, key, holder).catch(() => undefined);
}

/** Per corked socket (or cluster): what writeTogether's callers asked to issue last. */
const lastCommands = new WeakMap<object, Array<(together: number, position: number) => void>>();

const lastErrors = new WeakMap<object, Error>();

/**
 * A new connection (not yet connected: call `connectChecked`). Connection errors
 * are kept for connectChecked's message, never printed by ioredis itself.
 */
export function createRedis(config: Config, purpose: ConnectionPurpose): RedisClient {
  const client = waitNotice(createClient(config, purpose), config, purpose);
  client.on('error', (err: Error) => lastErrors.set(client, err));
  return client;
}

function createClient(config: Config, purpose: ConnectionPurpose): RedisClient {
  const options = redisOptions(purpose);
  if (config.redisClusterNodes.length > 0) {
    const { password, username, tls } = urlAuth(config.redisUrl);
    const cluster = new Cluster([...config.redisClusterNodes], {
      lazyConnect: true,
      enableOfflineQueue: true,
      clusterRetryStrategy: purpose === 'cli' ? (times) => (times > 2 ? null : 200) : (times) => Math.min(200 * times, 2000),
      redisOptions: { ...options, lazyConnect: false, password, username, tls },
    });
    return defineCommands(cluster);
  }
  const sentinel = sentinelOptions(config, purpose);
  return defineCommands(sentinel ? sentinelClient(config, { ...options, ...sentinel }) : new Redis(config.redisUrl, options));
}

/**
 * A connection through the Sentinels, which also leaves a hung master on a switch
 * (sentinel-switch.ts). A command-line run too: one started while the master hung was
 * given that master by the Sentinels, and gave up after 10 s (connectChecked) or waited
 * for it to wake, even once the Sentinels had promoted another.
 */
function sentinelClient(config: Config, options: RedisOptions): Redis {
  const client = new Redis(options);
  const { password, tls } = urlAuth(config.redisUrl);
  return followSwitches(client, { sentinels: config.redisSentinels, name: config.redisSentinelName, ...(password ? { password } : {}), ...(tls ? { tls } : {}) });
}

/**
 * With REDIS_SENTINELS: ioredis's own Sentinel support, which asks the Sentinels
 * for the master and follows a failover (a hung master too, for a long-lived
 * connection: sentinel-switch.ts). Credentials come from REDIS_URL and are
 * used for the master (and for the Sentinels, which commonly share them).
 */
function sentinelOptions(config: Config, purpose: ConnectionPurpose): RedisOptions | undefined {
  if (config.redisSentinels.length === 0) return undefined;
  const { password, username, tls } = urlAuth(config.redisUrl);
  return {
    sentinels: [...config.redisSentinels],
    name: config.redisSentinelName,
    // as for the master: a command-line run gives up soon, a worker keeps asking
    sentinelRetryStrategy: purpose === 'cli' ? (times) => (times > 2 ? null : 200) : (times) => Math.min(200 * times, 2000),
    ...(password ? { password, sentinelPassword: password } : {}),
    ...(username ? { username } : {}),
    ...(tls ? { tls, enableTLSForSentinelMode: true } : {}),
  };
}

function urlAuth(url: string): { password?: string; username?: string; tls?: object } {
  const u = new URL(url);
  return {
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

export { RedisUnavailable };

/** Where Redis is, for messages: never with the password. */
export function describeRedis(config: Config): string {
  if (config.redisSentinels.length > 0) {
    return `the Redis master "${config.redisSentinelName}" through the Sentinels at ${config.redisSentinels.map((n) => `${n.host}:${n.port}`).join(',')}`;
  }
  return config.redisClusterNodes.length > 0
    ? `the Redis Cluster at ${config.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}`
    : `Redis at ${maskUrl(config.redisUrl)}`;
}

/** The database REDIS_URL selects (0 on a cluster, which has only that one). */
function selectedDatabase(config: Config): number {
  return config.redisClusterNodes.length > 0 ? 0 : databaseInUrl(config.redisUrl) ?? 0;
}

/** Whether REDIS_URL selects a database other than 0 (one that may not exist). */
export const selectsDatabase = (config: Config): boolean => selectedDatabase(config) !== 0;

/**
 * Whether the database REDIS_URL selects exists: ioredis answers a failed SELECT at
 * connect with an 'error' event and goes on in database 0, where every key would then
 * be written. Returns the sentence that refuses the run, or undefined when it exists.
 */
export async function missingDatabase(client: RedisClient, config: Config): Promise<string | undefined> {
  const db = selectedDatabase(config);
  if (db === 0) return undefined;
  try {
    await (client as Redis).select(db);
    return undefined;
  } catch (err) {
    if (!(err instanceof Error) || !/DB index|out of range|invalid/i.test(err.message)) throw err;
    return `REDIS_URL selects database ${db}, which ${describeRedis(config)} does not have (${err.message}): use a database it has (0 to 15 unless its "databases" setting allows more).`;
  }
}

/** How long a command-line run waits to reach Redis at start (ms). */
const CONNECT_BOUND_MS = 10_000;

/**
 * Connects and pings once.
 * @throws RedisUnavailable with one sentence naming where Redis was expected.
 */
export async function connectChecked(client: RedisClient, config: Config): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    // bounded: a cluster that gives up mid-failover may leave connect() unsettled
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_BOUND_MS} ms`)), CONNECT_BOUND_MS);
    });
    const connected = client.connect().catch((err: unknown) => {
      // let go of on a Sentinel switch before it was ready: it reconnects to the new master
      // by itself, and the ping below is answered there
      if (!(client instanceof Redis && letGoOnSwitch(client) && client.status === 'reconnecting')) throw err;
    });
    await Promise.race([connected.then(() => client.ping()), timeout]);
  } catch (err) {
    // connected and never answered: a Redis that hangs (stopped, stalled, or a master failing over)
    const hung = client instanceof Redis && client.status === 'connect' && !lastErrors.has(client);
    client.disconnect();
    if (hung) {
      throw new RedisUnavailable(
        `cannot reach ${describeRedis(config)}: it accepted the connection but answered nothing within ${CONNECT_BOUND_MS / 1000} s (it may be stopped, overloaded or failing over); run the command again once it answers.`,
      );
    }
    const cause = lastErrors.get(client) ?? err;
    if (refusedCredentials(cause)) throw new RedisUnavailable(refusedCredentialsSentence(describeRedis(config), cause));
    const reason = maskUrl(cause instanceof Error ? cause.message : String(cause));
    throw new RedisUnavailable(
      `cannot reach ${describeRedis(config)} (${reason}): start Redis or set REDIS_URL / REDIS_CLUSTER_NODES / REDIS_SENTINELS.`,
    );
  } finally {
    clearTimeout(timer);
  }
  const missing = await missingDatabase(client, config);
  if (missing) {
    client.disconnect();
    throw new RedisUnavailable(missing);
  }
}

/**
 * A connection for BullMQ (Queue or Worker), which duplicates it for its blocking
 * connections. Not lazy: BullMQ expects it to connect by itself.
 */
export function bullConnection(config: Config, purpose: ConnectionPurpose): Redis | Cluster {
  return waitNotice(newBullConnection(config, purpose), config, purpose);
}

/** A command-line run says so on stderr when Redis stops answering it (redis-wait-notice.ts). */
function waitNotice<T extends Redis | Cluster>(client: T, config: Config, purpose: ConnectionPurpose): T {
  if (purpose !== 'cli') return client;
  return noticeSlowAnswers(client, `${describeRedis(config)} has not answered for ${REDIS_WAIT_NOTICE_MS / 1000} s; still waiting (it may be busy, stopped or failing over). Ctrl-C stops; running the same command again later is safe.`);
}

function newBullConnection(config: Config, purpose: ConnectionPurpose): Redis | Cluster {
  const options = { ...redisOptions(purpose), lazyConnect: false, maxRetriesPerRequest: purpose === 'worker' ? null : 1 };
  if (config.redisClusterNodes.length > 0) {
    const { password, username, tls } = urlAuth(config.redisUrl);
    return new Cluster([...config.redisClusterNodes], {
      enableOfflineQueue: true,
      clusterRetryStrategy: options.retryStrategy as (times: number) => number | null,
      redisOptions: { ...options, password, username, tls },
    });
  }
  const sentinel = sentinelOptions(config, purpose);
  return sentinel ? sentinelClient(config, { ...options, ...sentinel }) : new Redis(config.redisUrl, options);
}
