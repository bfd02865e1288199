/**
 * Redis key names. Every key of one seller's limiter and uploads carries the
 * seller's hash tag `{sellerId}`, so each script call touches one cluster slot.
 * The namespace is QUEUE_PREFIX without its braces (`{bulk-register}` ->
 * `bulk-register`): the seller, not the queue, must be the hash tag.
 */
export const SELLER_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function namespaceOf(queuePrefix: string): string {
  return queuePrefix.replace(/[{}]/g, '') || 'bulk-register';
}

export type SellerKeys = ReturnType<typeof sellerKeys>;

export function sellerKeys(ns: string, sellerId: string) {
  const base = `${ns}:rl:{${sellerId}}`;
  return {
    plan: `${base}:plan`,
    sent: `${base}:sent`,
    /** string "{max}/{windowMs}": the seller's own rule (`limits set`), read with `blocked` and `throttle` in one MGET */
    rule: `${base}:rule`,
    /** string "{max}/{windowMs}": the operator's rule (`limits set`); `rule` holds it unless the marketplace announced one */
    override: `${base}:override`,
    /** string "{max}/{windowMs}": the rule the marketplace last announced for the seller (marketplace.md); wins over the others */
    apiRule: `${base}:api-rule`,
    /** hash {max, windowMs}: where an earlier version kept the rule (moved to `rule` by migrateLimits) */
    legacyLimits: `${base}:limits`,
    blocked: `${base}:blocked`,
    throttle: `${base}:throttle`,
    lag: `${base}:lag`,
    /** string: the last queue priority handed to the seller's rows (upload/fair-share.ts) */
    tail: `${base}:tail`,
  };
}

/** string, 60 s: written by `upload` on a cluster so that WAIT on the seller's master covers it (upload/replicated.ts) */
export const replicaCheckKey = (ns: string, sellerId: string) => `${ns}:up:{${sellerId}}:replica-check`;

export function uploadKeys(ns: string, sellerId: string, uploadId: string) {
  const base = `${ns}:up:{${sellerId}}:${uploadId}`;
  return {
    /** hash: sellerId, file, rows, total, registered, duplicate, failed, createdAt, enqueued */
    upload: base,
    /** hash: row -> final outcome JSON */
    rows: `${base}:rows`,
    /** string: JSON of the invalid rows and the sheet's rows as uploaded (for reports) */
    sheet: `${base}:sheet`,
  };
}

/** zset of `${sellerId}/${uploadId}` scored by creation time (ms): the upload index. */
export const uploadIndexKey = (ns: string) => `${ns}:uploads`;
/** set of sellers that have a limit override. */
export const limitIndexKey = (ns: string) => `${ns}:limits`;

/** The row's identity everywhere: BullMQ job id tail, plan member and Idempotency-Key. */
export const rowMember = (uploadId: string, row: number) => `${uploadId}:${row}`;

export const QUEUE_NAME = 'registrations';
