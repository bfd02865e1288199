/**
 * Everything that steers the pool, in one hash that every worker process reads
 * with one HGETALL every PAUSE_POLL_MS (steering/pauses.ts PauseWatch):
 *
 *   `{ns}:steer`  hash
 *     pause:<sellerId>  JSON Pause   a seller's pause (`pause:*`: every seller)
 *     cancel:<uploadId> ms           an upload cancelled (steering/cancel.ts)
 *     api-down          JSON ApiDown the API counts as unavailable (steering/outage.ts)
 *
 * Kept in Redis: it survives restarts of the pool and a failover.
 */
export const steerKey = (ns: string) => `${ns}:steer`;
export const PAUSE = 'pause:';
export const CANCEL = 'cancel:';
export const API_DOWN = 'api-down';
