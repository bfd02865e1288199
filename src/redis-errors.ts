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

/**
 * Redis refused the connection's credentials: none given where it wants a password
 * (NOAUTH), a wrong user or password (WRONGPASS), or a password where it has none
 * set. Not Redis being away: waiting or "start Redis" would not help.
 */
export function refusedCredentials(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /^(NOAUTH|WRONGPASS)\b|invalid password|AUTH.*without any password configured|no password is set/i.test(message);
}

/** The sentence for refused credentials, `where` naming the Redis (without its password). */
export function refusedCredentialsSentence(where: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const why = /^NOAUTH\b/i.test(message) ? 'it wants a password, and REDIS_URL gives none'
    : /^WRONGPASS\b|invalid password/i.test(message) ? 'the user or password REDIS_URL gives is wrong'
    : 'it has no password set, and REDIS_URL gives one';
  return `${where} refused the connection: ${why}; set REDIS_URL with the user and password it wants.`;
}
