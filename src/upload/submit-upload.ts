/**
 * One sheet, checked or enqueued: what `upload` prints as JSON and what the
 * console's POST /api/uploads answers. Both call this, so a dry run on the web
 * and on the command line apply the same rules and give the same object.
 */
import type { Config } from '../config.js';
import { namespaceOf, replicaCheckKey } from '../keys.js';
import type { LoadedSheet } from '../excel/load-sheet.js';
import { extraColumnsWarning, type RowError } from '../excel/parse-products.js';
import type { RedisClient } from '../redis.js';
import type { QueueSet } from '../queue.js';
import { enqueueUpload, uploadIdFor, uploadedBefore } from './enqueue-upload.js';
import { confirmOnReplica } from './replicated.js';

/** The `upload --json` object of cli.md (dryRun and valid only in a dry run). */
export interface UploadSummary {
  uploadId: string;
  sellerId: string;
  file: string;
  rows: number;
  enqueued: number;
  alreadyUploaded: boolean;
  errors: RowError[];
  warnings: string[];
  dryRun?: true;
  valid?: number;
}

export interface SubmitDeps {
  redis: RedisClient;
  queues: QueueSet;
  config: Config;
  now: () => number;
}

export interface SubmitOptions {
  dryRun: boolean;
  /**
   * A dry run with Redis at hand (the console's Check): `alreadyUploaded` says whether the
   * file was uploaded before for the seller. The CLI's dry run reads no Redis.
   */
  lookUpEarlier?: boolean;
  /** REGISTRATION_ADAPTER: unset means the built-in adapter, which sends no extra column (one warning says so). */
  config: Pick<Config, 'registrationAdapter'>;
}

/**
 * Enqueues the sheet's valid rows (unless `dryRun`, or none is valid) and, when
 * the master has replicas, waits for one to confirm them. The summary's
 * warnings are the sheet's and the one about extra columns the adapter drops.
 * @throws NotReplicated when no replica confirmed in time (the rows are on the master).
 */
export async function submitUpload(deps: SubmitDeps | undefined, sellerId: string, sheet: LoadedSheet, opts: SubmitOptions): Promise<UploadSummary> {
  const { dryRun } = opts;
  let uploadId = uploadIdFor(sellerId, sheet.sha256);
  let enqueued = 0;
  let alreadyUploaded = false;
  if (!dryRun && sheet.valid.length > 0) {
    if (!deps) throw new Error('submitUpload: enqueueing needs a Redis connection and a queue');
    let queuePrefix: string | undefined;
    ({ uploadId, enqueued, alreadyUploaded, queuePrefix } = await enqueueUpload(deps, sellerId, sheet));
    // the shards' queues share one connection: its WAIT covers whichever one was written
    const prefix = queuePrefix ?? deps.queues.prefixes[0]!;
    const ns = namespaceOf(deps.config.queuePrefix);
    await confirmOnReplica(deps.redis, deps.queues.get(prefix), { seller: replicaCheckKey(ns, sellerId), queue: `${prefix}:replica-check` });
  }
  // a check answers without it when Redis fails it
  if (dryRun && opts.lookUpEarlier && deps) alreadyUploaded = await uploadedBefore(deps.redis, namespaceOf(deps.config.queuePrefix), sellerId, uploadId).catch(() => false);
  const notSent = extraColumnsWarning(sheet.extraColumns, !opts.config.registrationAdapter);
  return {
    uploadId, sellerId, file: sheet.file, rows: sheet.rows, enqueued, alreadyUploaded,
    errors: sheet.errors, warnings: notSent === undefined ? sheet.warnings : [...sheet.warnings, notSent],
    ...(dryRun ? { dryRun: true as const, valid: sheet.valid.length } : {}),
  };
}
