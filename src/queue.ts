/** The registration queue: its name, job shape and job options, shared by producer and workers. */
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { Config } from './config.js';
import type { Product } from './excel/fields.js';
import { QUEUE_NAME } from './keys.js';

export interface RegistrationJob {
  sellerId: string;
  uploadId: string;
  /** The spreadsheet's row number. */
  row: number;
  product: Product;
}

/** BullMQ job ids may not contain ':'; the row's Idempotency-Key does (`{uploadId}:{row}`). */
export const jobIdFor = (uploadId: string, row: number) => `${uploadId}-${row}`;

/**
 * Rows wait in BullMQ's prioritized set: rows that already hold a slot at
 * DUE_ROW, so a row woken at its slot is not stuck behind rows not yet planned;
 * new rows at NEW_ROW or later, by their place in the fair round over all
 * sellers (upload/fair-share.ts).
 */
export const PRIORITY = { DUE_ROW: 1, NEW_ROW: 2 } as const;

export function jobOptions(config: Config): JobsOptions {
  return {
    priority: PRIORITY.NEW_ROW,
    attempts: config.maxAttempts,
    backoff: { type: 'jitter' },
    removeOnComplete: { age: config.jobRetentionS, count: config.jobRetentionCount },
    removeOnFail: { age: config.jobRetentionS, count: config.jobRetentionCount },
  };
}

export function createQueue(config: Config, connection: ConnectionOptions): Queue<RegistrationJob> {
  return new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix: config.queuePrefix });
}
