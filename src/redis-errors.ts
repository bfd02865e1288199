/**
 * The errors about Redis that the command line explains in one sentence
 * (src/cli/exit.ts). On their own, like config-error.ts, so that explaining one
 * loads no Redis client: `bulk-register --version` or a usage mistake should
 * not pay for ioredis and BullMQ.
 */

/** Redis cannot be reached, or kept failing. */
export class RedisUnavailable extends Error {
  override readonly name = 'RedisUnavailable';
}

/** A Redis setting the queue depends on is wrong, and --strict refuses it (redis-checks.ts). */
export class RedisMisconfigured extends Error {
  override readonly name = 'RedisMisconfigured';
}

/** The rows are on the master, but no replica confirmed them within the bound (upload/replicated.ts). */
export class NotReplicated extends Error {
  override readonly name = 'NotReplicated';
}
