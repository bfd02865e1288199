/**
 * Rows kept aside in a set, to be promoted later: held for a pause, deferred by
 * the producer. Apart from queue.ts so that a reader of the pauses (`status`)
 * does not load BullMQ: the queues are passed in.
 */
import type { QueueSet } from './queue.js';

/** A row kept in a set to be promoted later (held for a pause, deferred by the producer): its queue and job. */
export const queuedRow = (prefix: string, jobId: string) => `${prefix}\t${jobId}`;

/**
 * Promotes the row `entry` (queuedRow) if its job is still delayed. Returns the job's
 * state before: 'delayed' when it was promoted, 'unknown' when it is gone.
 */
export async function promoteIfDelayed(queues: QueueSet, entry: string): Promise<string> {
  const [prefix, jobId] = entry.split('\t') as [string, string];
  const job = await queues.get(prefix).getJob(jobId);
  const state = job ? await job.getState() : 'unknown';
  if (job && state === 'delayed') await job.promote();
  return state;
}
