/**
 * The producer of a capacity run, in a process of its own, as `bulk-register
 * upload` and the console are: the bench's own process serves the mock API, and
 * 200 uploads enqueued there held its event loop (and with it every request
 * arriving at the API) for 1.0-1.3 s at the start of every run.
 *
 * IPC, from the bench: { config, shards, bare, uploads: [{ seller, rows, afterMs }] }.
 * The child builds the sheets and connects, says { ready: true }, and on 'go'
 * submits each upload `afterMs` after it; then it says { uploadedAt, enqueuedAt }
 * (ms since the epoch, per seller; one host, one clock) and exits.
 */
import { Queue } from 'bullmq';
import type { Config } from '../src/config.js';
import { QUEUE_NAME } from '../src/keys.js';
import { QueueSet, type RegistrationJob } from '../src/queue.js';
import { shardOf, shardPrefixes } from '../src/queue-shards.js';
import { createRedis } from '../src/redis.js';
import { enqueueUpload } from '../src/upload/enqueue-upload.js';
import { bareJobs, sheetOf } from './harness.js';

export interface ProducerPlan {
  config: Config;
  shards: number;
  bare: boolean;
  uploads: Array<{ seller: string; rows: number; afterMs: number }>;
}

export interface ProducerTimes {
  uploadedAt: Record<string, number>;
  enqueuedAt: Record<string, number>;
}

const send = (m: unknown) => new Promise<void>((r) => process.send!(m, () => r()));

process.once('message', async (plan: ProducerPlan) => {
  const { config, bare } = plan;
  const redis = createRedis(config, 'worker');
  await redis.connect();
  const prefixes = plan.shards > 1 ? shardPrefixes(config.queuePrefix, plan.shards) : [config.queuePrefix];
  const queues = new QueueSet(prefixes, (prefix) => new Queue<RegistrationJob>(QUEUE_NAME, { connection: redis as never, prefix }));
  const deps = { redis, queues, config, now: Date.now };
  const sheets = new Map(plan.uploads.map(({ seller, rows }) => [seller, sheetOf(seller, rows)]));
  const times: ProducerTimes = { uploadedAt: {}, enqueuedAt: {} };

  const upload = async (seller: string) => {
    times.uploadedAt[seller] = Date.now();
    const sheet = sheets.get(seller)!;
    if (bare) {
      await queues.get(shardOf(seller, queues.prefixes)).addBulk(bareJobs(seller, sheet, config));
    } else {
      await enqueueUpload(deps, seller, sheet);
    }
    times.enqueuedAt[seller] = Date.now();
  };

  process.once('message', async () => {
    const go = Date.now();
    await Promise.all(plan.uploads.map(async ({ seller, afterMs }) => {
      if (afterMs > 0) await new Promise((r) => setTimeout(r, go + afterMs - Date.now()));
      await upload(seller);
    }));
    await send(times);
    redis.disconnect();
    process.exit(0);
  });
  await send({ ready: true });
});
