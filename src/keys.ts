/**
 * Redis key names. Every key of one seller's limiter and uploads carries the
 * seller's hash tag `{sellerId}`, so each script call touches one cluster slot.
 * The namespace is QUEUE_PREFIX without its braces (`{bulk-register}` ->
 * `bulk-register`): the seller, not the queue, must be the hash tag.
 */
export const SELLER_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** An upload's id as uploadIdFor (upload/enqueue-upload.ts) makes it: 24 hex digits. */
export const UPLOAD_ID = /^[0-9a-f]{24}$/;

let collator: Intl.Collator | undefined;
/**
 * Seller ids in the order a person reads them: S2 before S10 (numbers by value), then as written.
 * The collator is made at the first comparison: making it loads ICU's data (about 15 ms), which
 * a command that sorts no seller (upload) should not pay at its start.
 */
export function bySellerId(a: string, b: string): number {
  collator ??= new Intl.Collator('en', { numeric: true });
  return collator.compare(a, b);
}

export function namespaceOf(queuePrefix: string): string {
  return queuePrefix.replace(/[{}]/g, '') || 'bulk-register';
}

/** `{ns}:{kind}:{seller}`, or `{ns}:{kind}:{home}:seller` when the seller is pinned to a shard's tag. */
function homeBase(ns: string, kind: 'rl' | 'up', sellerId: string, home: string): string {
  return home === sellerId ? `${ns}:${kind}:{${sellerId}}` : `${ns}:${kind}:{${home}}:${sellerId}`;
}

export type SellerKeys = ReturnType<typeof sellerKeys>;

/**
 * A seller's keys carry its home's hash tag: its own id, or on Redis Cluster the
 * tag of the queue shard it is pinned to (seller-home.ts), so that its limiter
 * and upload keys share a slot with its jobs. `home` is that tag.
 */
export function sellerKeys(ns: string, sellerId: string, home: string = sellerId) {
  const base = homeBase(ns, 'rl', sellerId, home);
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
    /** string: until when (Redis ms) the producer holds the seller's rows beyond its first window back (upload/deferral.ts) */
    defer: `${base}:defer`,
    /** set: "{queue prefix}\t{job id}" of the seller's deferred rows, brought forward when its rule is raised */
    deferred: `${base}:deferred`,
    lag: `${base}:lag`,
    /** string: the last queue priority handed to the seller's rows (upload/fair-share.ts) */
    tail: `${base}:tail`,
  };
}

/** string, 60 s: written by `upload` on a cluster so that WAIT on the seller's master covers it (upload/replicated.ts) */
export const replicaCheckKey = (ns: string, sellerId: string) => `${ns}:up:{${sellerId}}:replica-check`;

export function uploadKeys(ns: string, sellerId: string, uploadId: string, home: string = sellerId) {
  const base = `${homeBase(ns, 'up', sellerId, home)}:${uploadId}`;
  return {
    /** hash: sellerId, file, rows, total, registered, duplicate, failed, createdAt, enqueued */
    upload: base,
    /** hash: row -> final outcome JSON */
    rows: `${base}:rows`,
    /** string: JSON of the invalid rows and the sheet's rows as uploaded (for reports) */
    sheet: `${base}:sheet`,
    /**
     * string, while a producer adds the upload's rows (a first upload, or the cancelled
     * rows of an upload sent again): no row of it is judged lost meanwhile (upload/lost-rows.ts).
     * Its TTL (ENQUEUE_GRACE_MS) runs on Redis's clock and ends a producer that died.
     */
    enqueuing: `${base}:enqueuing`,
  };
}

/** zset of `${sellerId}/${uploadId}` scored by creation time (ms): the upload index. */
export const uploadIndexKey = (ns: string) => `${ns}:uploads`;
/** zset of upload ids whose finish (or cancel) no webhook event has told yet, scored by when they were enqueued (steering/webhooks.ts). */
export const unnotifiedKey = (ns: string) => `${ns}:unnotified`;
/** set of sellers that have a limit override. */
export const limitIndexKey = (ns: string) => `${ns}:limits`;

/** The row's identity everywhere: BullMQ job id tail, plan member and Idempotency-Key. */
export const rowMember = (uploadId: string, row: number) => `${uploadId}:${row}`;
/** rowMember's parts, or undefined for a member it did not write. */
export function parseRowMember(member: string): { uploadId: string; row: number } | undefined {
  const at = member.lastIndexOf(':');
  const row = Number(member.slice(at + 1));
  return at > 0 && Number.isInteger(row) ? { uploadId: member.slice(0, at), row } : undefined;
}

export const QUEUE_NAME = 'registrations';
