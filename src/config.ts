/**
 * Environment -> one frozen, typed Config.
 *
 * Every variable of cli.md is validated here, at start-up, and every bad one is
 * named at once in a ConfigError whose message is one sentence per variable:
 * the variable, the value that arrived, and what was expected.
 */
import { z } from 'zod';
import { ConfigError } from './config-error.js';
import { databaseInUrl } from './redis-url.js';
import { MAX_ATTEMPTS_CEILING } from './job-attempts.js';

export { ConfigError };

const intIn = (min: number, max: number, what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `expected ${what}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `expected ${what}`);

const redisUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'expected a redis:// or rediss:// URL such as redis://127.0.0.1:6379')
  // (a URL that cannot be read at all is refused above, once)
  .refine((v) => !URL.canParse(v) || databaseInUrl(v) !== undefined, 'the database must be a number, as in redis://127.0.0.1:6379/0 (or none: database 0)');

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'expected an http:// or https:// URL such as http://127.0.0.1:3000');

const clusterNodes = z
  .string()
  .trim()
  .refine(
    (v) => v === '' || v.split(',').every((s) => /^[^\s:,]+:\d{1,5}$/.test(s.trim())),
    'expected comma-separated host:port seeds such as 10.0.0.1:7000,10.0.0.2:7000',
  )
  .transform((v) =>
    v === ''
      ? []
      : v.split(',').map((s) => {
          const [host, port] = s.trim().split(':') as [string, string];
          return { host, port: Number(port) };
        }),
  );

/** Variables whose values are secrets: never shown in a message. */
const SECRETS = new Set(['CONSOLE_OPERATOR_TOKEN', 'CONSOLE_SECRET', 'REGISTRATION_TOKEN', 'UPLOAD_WEBHOOK_SECRET']);

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Each variable with its default, as `.env.example` lists them. */
const schema = z.object({
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: clusterNodes.default([]),
  REDIS_SENTINELS: clusterNodes.default([]),
  REDIS_SENTINEL_NAME: z.string().trim().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected the master\'s name at the Sentinels: 1-64 letters, digits, _ . -').default('mymaster'),
  QUEUE_SHARDS: intIn(1, 256, 'a whole number of queue shards from 1 to 256').optional(),
  REGISTRATION_API_URL: httpUrl.default('http://127.0.0.1:3000'),
  RATE_LIMIT_MAX: intIn(1, 1_000_000, 'a whole number of registrations from 1 to 1000000').default(100),
  RATE_LIMIT_WINDOW_MS: intIn(1, 86_400_000, 'a whole number of milliseconds from 1 to 86400000').default(60_000),
  RATE_LIMIT_GUARD_MS: intIn(0, 60_000, 'a whole number of milliseconds from 0 to 60000').default(500),
  WORKER_PROCESSES: intIn(1, 256, 'a whole number of processes from 1 to 256').default(16),
  // `auto` (measured, docs/operations.md "Sizing the pool"): each process follows the API's answer
  // time, 1 slot per 25 ms between 1 and 64 (worker/adaptive-concurrency.ts); a number fixes it
  WORKER_CONCURRENCY: z
    .union([z.literal('auto'), intIn(1, 100, 'auto or a whole number of jobs from 1 to 100')], { message: 'expected auto or a whole number of jobs from 1 to 100' })
    .default('auto'),
  API_TIMEOUT_MS: intIn(100, 600_000, 'a whole number of milliseconds from 100 to 600000').default(10_000),
  MAX_ATTEMPTS: intIn(1, MAX_ATTEMPTS_CEILING, `a whole number of attempts from 1 to ${MAX_ATTEMPTS_CEILING}`).default(5),
  QUEUE_PREFIX: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_{}:.-]{1,64}$/, 'expected 1-64 characters of letters, digits, _ - : . { }')
    .default('{bulk-register}'),
  LOG_LEVEL: z.enum(LEVELS, { message: `expected one of ${LEVELS.join(', ')}` }).default('info'),
  LOG_PRETTY: z.enum(['0', '1', ''], { message: 'expected 1 or 0' }).default(''),
  MOCK_API_PORT: intIn(0, 65_535, 'a port number from 0 to 65535').default(3000),
  METRICS_PORT: intIn(0, 65_535, 'a port number from 0 to 65535').default(9464),
  SHUTDOWN_TIMEOUT_MS: intIn(100, 600_000, 'a whole number of milliseconds from 100 to 600000').default(30_000),
  LOCK_DURATION_MS: intIn(1000, 600_000, 'a whole number of milliseconds from 1000 to 600000').default(10_000),
  JOB_RETENTION_S: intIn(1, 31_536_000, 'a whole number of seconds from 1 to 31536000').default(86_400),
  JOB_RETENTION_COUNT: intIn(0, 10_000_000, 'a whole number from 0 to 10000000').default(10_000),
  UPLOAD_RETENTION_S: intIn(1, 31_536_000, 'a whole number of seconds from 1 to 31536000').default(604_800),
  CONSOLE_PORT: intIn(0, 65_535, 'a port number from 0 to 65535').default(8080),
  CONSOLE_HOST: z.string().trim().regex(/^[A-Za-z0-9_.:-]{1,253}$/, 'expected an address to bind, such as 127.0.0.1 or 0.0.0.0').default('127.0.0.1'),
  CONSOLE_OPERATOR_TOKEN: z.string().trim().regex(/^[\x21-\x7e]{1,512}$/, 'expected 1-512 printable characters with no spaces').optional(),
  CONSOLE_SECRET: z.string().trim().regex(/^[\x21-\x7e]{1,512}$/, 'expected 1-512 printable characters with no spaces').optional(),
  CONSOLE_MAX_UPLOAD_BYTES: intIn(1024, 1_073_741_824, 'a whole number of bytes from 1024 to 1073741824').default(10_485_760),
  CONSOLE_PUBLIC_URL: httpUrl.optional(),
  REGISTRATION_ADAPTER: z.string().trim().regex(/\.(m?js)$/, 'expected the path of an ES module ending in .mjs or .js').optional(),
  SELLER_CREDENTIALS_FILE: z.string().trim().min(1).optional(),
  REGISTRATION_TOKEN: z.string().trim().regex(/^[\x21-\x7e]{1,4096}$/, 'expected 1-4096 printable characters with no spaces').optional(),
  TEMPLATE_COLUMNS_FILE: z.string().trim().min(1).optional(),
  UPLOAD_WEBHOOK_URL: httpUrl.optional(),
  UPLOAD_WEBHOOK_SECRET: z.string().trim().min(1).optional(),
  UPLOAD_WEBHOOK_RETRY_MS: intIn(100, 600_000, 'a whole number of milliseconds from 100 to 600000').default(5000),
});

export type Config = Readonly<{
  redisUrl: string;
  redisClusterNodes: ReadonlyArray<{ host: string; port: number }>;
  /** Sentinels to ask for the master (REDIS_SENTINELS); empty: REDIS_URL or the cluster. */
  redisSentinels: ReadonlyArray<{ host: string; port: number }>;
  redisSentinelName: string;
  /** Queues the sellers are spread over; undefined: 1 on a single Redis, 2 per master on a cluster (queue-shards.ts). */
  queueShards: number | undefined;
  apiUrl: string;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  rateLimitGuardMs: number;
  workerProcesses: number;
  /** Jobs per process at once, or `auto`: adapted to the API's answer time (worker/adaptive-concurrency.ts). */
  workerConcurrency: number | 'auto';
  apiTimeoutMs: number;
  maxAttempts: number;
  queuePrefix: string;
  logLevel: (typeof LEVELS)[number];
  logPretty: boolean | undefined;
  mockApiPort: number;
  metricsPort: number;
  shutdownTimeoutMs: number;
  lockDurationMs: number;
  jobRetentionS: number;
  jobRetentionCount: number;
  uploadRetentionS: number;
  console: Readonly<{
    port: number;
    host: string;
    /** Secret: never logged. Empty: operator access is open on a loopback host, refused elsewhere. */
    operatorToken: string;
    /** Secret: never logged. Empty: seller links are off. */
    secret: string;
    maxUploadBytes: number;
    /** Base of the links `console link` prints; default http://<host>:<port>. */
    publicUrl: string | undefined;
  }>;
  /** REGISTRATION_ADAPTER: the adapter module's path as given (resolved against the working directory); undefined: built-in. */
  registrationAdapter: string | undefined;
  /** SELLER_CREDENTIALS_FILE: per-seller credentials (marketplace.md); undefined: none. */
  sellerCredentialsFile: string | undefined;
  /** Secret: never logged. A static bearer token for the built-in adapter. */
  registrationToken: string | undefined;
  /** TEMPLATE_COLUMNS_FILE: the marketplace's own columns `template` adds (JSON); undefined: none. */
  templateColumnsFile: string | undefined;
  /** UPLOAD_WEBHOOK_URL: where events are POSTed (steering/webhooks.ts); undefined: none. */
  webhookUrl: string | undefined;
  /** Secret: never logged. UPLOAD_WEBHOOK_SECRET, `whsec_<base64>`. */
  webhookSecret: string | undefined;
  /** UPLOAD_WEBHOOK_RETRY_MS: the wait before an undelivered event's first retry; it doubles up to 1 h. */
  webhookRetryMs: number;
}>;

/**
 * Validates `env` (process.env by default). Empty strings count as unset, so a
 * `.env` line like `REDIS_CLUSTER_NODES=` keeps the default.
 * @throws ConfigError naming every bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const sentences = parsed.error.issues.map((issue) => {
      const variable = String(issue.path[0]);
      // a secret's value is never echoed, even a wrong one
      const shown = SECRETS.has(variable) ? '(hidden)' : JSON.stringify(raw[variable] ?? '');
      return `${variable}=${shown} is invalid: ${issue.message}.`;
    });
    throw new ConfigError([...new Set(sentences)].join(' '));
  }
  const c = parsed.data;
  if (c.REDIS_CLUSTER_NODES.length > 0 && databaseInUrl(c.REDIS_URL) !== 0) {
    throw new ConfigError('REDIS_URL selects a database other than 0, but REDIS_CLUSTER_NODES is set and a Redis Cluster has only database 0: drop the database from REDIS_URL.');
  }
  if (c.REDIS_CLUSTER_NODES.length > 0 && c.REDIS_SENTINELS.length > 0) {
    throw new ConfigError('REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: set one of them (a Redis Cluster, or a master found through Sentinels).');
  }
  if ((c.QUEUE_SHARDS ?? 1) > 1 && !/\{[^}]+\}/.test(c.QUEUE_PREFIX)) {
    throw new ConfigError(
      `QUEUE_PREFIX=${JSON.stringify(c.QUEUE_PREFIX)} is invalid: with QUEUE_SHARDS above 1 it needs a hash tag in braces, such as {bulk-register}, which each shard varies.`,
    );
  }
  if (c.REDIS_CLUSTER_NODES.length > 0 && !/\{[^}]+\}/.test(c.QUEUE_PREFIX)) {
    throw new ConfigError(
      `QUEUE_PREFIX=${JSON.stringify(c.QUEUE_PREFIX)} is invalid: in cluster mode (REDIS_CLUSTER_NODES set) it needs a hash tag in braces, such as {bulk-register}, so that each queue's keys share one slot.`,
    );
  }
  return Object.freeze({
    redisUrl: c.REDIS_URL,
    redisClusterNodes: Object.freeze(c.REDIS_CLUSTER_NODES),
    redisSentinels: Object.freeze(c.REDIS_SENTINELS),
    redisSentinelName: c.REDIS_SENTINEL_NAME,
    queueShards: c.QUEUE_SHARDS,
    apiUrl: c.REGISTRATION_API_URL.replace(/\/+$/, ''),
    rateLimitMax: c.RATE_LIMIT_MAX,
    rateLimitWindowMs: c.RATE_LIMIT_WINDOW_MS,
    rateLimitGuardMs: c.RATE_LIMIT_GUARD_MS,
    workerProcesses: c.WORKER_PROCESSES,
    workerConcurrency: c.WORKER_CONCURRENCY,
    apiTimeoutMs: c.API_TIMEOUT_MS,
    maxAttempts: c.MAX_ATTEMPTS,
    queuePrefix: c.QUEUE_PREFIX,
    logLevel: c.LOG_LEVEL,
    logPretty: c.LOG_PRETTY === '' ? undefined : c.LOG_PRETTY === '1',
    mockApiPort: c.MOCK_API_PORT,
    metricsPort: c.METRICS_PORT,
    shutdownTimeoutMs: c.SHUTDOWN_TIMEOUT_MS,
    lockDurationMs: c.LOCK_DURATION_MS,
    jobRetentionS: c.JOB_RETENTION_S,
    jobRetentionCount: c.JOB_RETENTION_COUNT,
    uploadRetentionS: c.UPLOAD_RETENTION_S,
    console: Object.freeze({
      port: c.CONSOLE_PORT,
      host: c.CONSOLE_HOST,
      operatorToken: c.CONSOLE_OPERATOR_TOKEN ?? '',
      secret: c.CONSOLE_SECRET ?? '',
      maxUploadBytes: c.CONSOLE_MAX_UPLOAD_BYTES,
      publicUrl: c.CONSOLE_PUBLIC_URL?.replace(/\/+$/, ''),
    }),
    registrationAdapter: c.REGISTRATION_ADAPTER,
    sellerCredentialsFile: c.SELLER_CREDENTIALS_FILE,
    registrationToken: c.REGISTRATION_TOKEN,
    templateColumnsFile: c.TEMPLATE_COLUMNS_FILE,
    webhookUrl: c.UPLOAD_WEBHOOK_URL,
    webhookSecret: c.UPLOAD_WEBHOOK_SECRET,
    webhookRetryMs: c.UPLOAD_WEBHOOK_RETRY_MS,
  });
}
