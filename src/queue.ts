/** The registration queue: its name, job shape and job options, shared by producer and workers. */
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { Config } from './config.js';
import { MAX_ATTEMPTS_CEILING } from './job-attempts.js';
import type { Product } from './excel/fields.js';
import { QUEUE_NAME } from './keys.js';
// pure helpers that need no BullMQ, where status and the limiter's readers find them without loading it
import { jobIdFor, jobNameFor, resolveShardPrefixes } from './queue-shards.js';

export { jobIdFor, jobNameFor, resolveShardPrefixes };

export interface RegistrationJob {
  sellerId: string;
  uploadId: string;
  /** The spreadsheet's row number. */
  row: number;
  /**
   * On Redis Cluster, the hash tag of the shard the seller is pinned to, which its
   * keys carry (seller-home.ts); absent when they carry the seller's own.
   */
  home?: string;
  product: Product;
  /**
   * The sheet's extra columns (marketplace.md `attributes`), only when the row
   * has any. After `product`: permit-next.lua reads sellerId, uploadId and row
   * from the front of the JSON of a job queued before jobs were named by their
   * seller (jobNameFor).
   */
  attributes?: Record<string, string>;
  /**
   * When the row's first call without a usable answer was granted (Redis ms), set
   * then and kept across its retries and outage holds: its last attempt fails only
   * when the API has answered another row since (steering/outage.ts), and a cancel
   * does not call the row unsent (steering/cancel.ts, cancelDetailOf).
   */
  failingSince?: number;
  /**
   * The row's call may have left under an earlier job of it: the same file uploaded
   * again after a cancel that ended the row `cancelled` with a call unanswered
   * (steering/cancel.ts, reopenCancelled). A cancel of this job does not call the row
   * unsent either.
   */
  calledBefore?: true;
}

/**
 * Rows wait in BullMQ's prioritized set: rows that already hold a slot at
 * DUE_ROW, so a row woken at its slot is not stuck behind rows not yet planned;
 * new rows at NEW_ROW or later, by their place in the fair round over all
 * sellers (upload/fair-share.ts).
 */
export const PRIORITY = { DUE_ROW: 1, NEW_ROW: 2 } as const;

/**
 * The pool's MAX_ATTEMPTS decides when a row gives up (worker/processor.ts):
 * its last attempt is judged against an outage, and a producer or console set
 * to fewer attempts than the pool must not fail rows before that. BullMQ's own
 * count on the job is only a ceiling, also for a row whose processing met a
 * Redis error (retried with backoff, never failed for it within minutes).
 */
export function jobOptions(config: Config): JobsOptions {
  return {
    priority: PRIORITY.NEW_ROW,
    attempts: MAX_ATTEMPTS_CEILING,
    backoff: { type: 'jitter' },
    removeOnComplete: { age: config.jobRetentionS, count: config.jobRetentionCount },
    removeOnFail: { age: config.jobRetentionS, count: config.jobRetentionCount },
  };
}

export function createQueue(config: Config, connection: ConnectionOptions): Queue<RegistrationJob> {
  return new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix: config.queuePrefix });
}

/**
 * The shards' queues of one process, opened as needed on one connection (so
 * that a WAIT on it covers every shard's writes on a single Redis).
 */
export class QueueSet {
  private readonly queues = new Map<string, Queue<RegistrationJob>>();

  constructor(
    /** The prefixes new uploads are spread over (queue-shards.ts), or how to find them now. */
    private readonly spread: readonly string[] | (() => readonly string[]),
    private readonly open: (prefix: string) => Queue<RegistrationJob>,
  ) {}

  get prefixes(): readonly string[] {
    return typeof this.spread === 'function' ? this.spread() : this.spread;
  }

  /** One queue that every upload goes to (tests, the bench). */
  static of(queue: Queue<RegistrationJob>): QueueSet {
    const set = new QueueSet([queue.opts.prefix ?? 'bull'], () => queue);
    set.queues.set(queue.opts.prefix ?? 'bull', queue);
    return set;
  }

  /** Queues on `connection` for `prefixes`. */
  static on(connection: ConnectionOptions, prefixes: readonly string[] | (() => readonly string[])): QueueSet {
    return new QueueSet(prefixes, (prefix) => new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix }));
  }

  get(prefix: string): Queue<RegistrationJob> {
    let q = this.queues.get(prefix);
    if (!q) {
      q = this.open(prefix);
      q.on('error', () => undefined);
      this.queues.set(prefix, q);
    }
    return q;
  }

  /** The queues opened so far. */
  opened(): Array<Queue<RegistrationJob>> {
    return [...this.queues.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.opened().map((q) => q.close().catch(() => undefined)));
  }
}

