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

export function jobOptions(config: Config): JobsOptions {
  return {
    attempts: config.maxAttempts,
    backoff: { type: 'jitter' },
    removeOnComplete: { age: config.jobRetentionS, count: config.jobRetentionCount },
    removeOnFail: { age: config.jobRetentionS, count: config.jobRetentionCount },
  };
}

export function createQueue(config: Config, connection: ConnectionOptions): Queue<RegistrationJob> {
  return new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix: config.queuePrefix });
}
