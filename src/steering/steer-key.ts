/**
 * Everything that steers the pool, in one hash read with one HGETALL every
 * PAUSE_POLL_MS: by the pool's supervisor, which sends each change to its
 * processes (steering/steer-relay.ts), or by a process on its own
 * (steering/pause-watch.ts):
 *
 *   `{ns}:steer`  hash
 *     pause:<sellerId>  JSON Pause   a seller's pause (`pause:*`: every seller)
 *     cancel:<uploadId> ms           an upload cancelled (steering/cancel.ts)
 *     api-down          JSON ApiDown the API counts as unavailable (steering/outage.ts)
 *     api-up            JSON ApiDown when it last became available again (its `since`)
 *     marketplace-rules "announced"   an answer carried a seller's rule (rate-limit/seller-limits.ts)
 *
 * Kept in Redis: it survives restarts of the pool and a failover.
 */
export const steerKey = (ns: string) => `${ns}:steer`;
export const PAUSE = 'pause:';
export const CANCEL = 'cancel:';
export const API_DOWN = 'api-down';
export const API_UP = 'api-up';
export const MARKETPLACE_RULES = 'marketplace-rules';
