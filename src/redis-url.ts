/**
 * The database a Redis URL selects. On its own, as config-error.ts is, so that
 * a worker process (src/redis.ts) reads it without loading config.ts's schema
 * library.
 */

/** The database number a Redis URL selects (its path, or ?db=): 0 when none; undefined when it is not a number. */
export function databaseInUrl(url: string): number | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const given = u.searchParams.get('db') ?? (u.pathname === '' || u.pathname === '/' ? '0' : u.pathname.slice(1));
  return /^\d{1,5}$/.test(given) ? Number(given) : undefined;
}
