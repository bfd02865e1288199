/**
 * A pool worker process for the bench that knows nothing of this project: a
 * BullMQ Worker whose processor posts the row with axios (its own adapter and
 * defaults) and returns the answer, as a team writes one without a limiter.
 * The capacity scenario runs it at the same fixed concurrency as bare BullMQ's
 * fixed pool, with Node's default heap settings, so that the default limiter
 * is measured against what a user would compare it with, beside the stricter
 * bare BullMQ (the product's own worker with no limiter). 5xx and network
 * errors go to BullMQ's retries; nothing here counts rows, paces sellers or
 * reads pauses.
 */
import { Worker } from 'bullmq';
import axios from 'axios';
import { Redis } from 'ioredis';
import type { Config } from '../src/config.js';
import { QUEUE_NAME } from '../src/keys.js';
import type { RegistrationJob } from '../src/queue.js';
import { WORKER_CONFIG_ENV } from '../src/worker/worker-config.js';

const config = JSON.parse(process.env[WORKER_CONFIG_ENV]!) as Config;
const api = axios.create({ baseURL: config.apiUrl, timeout: config.apiTimeoutMs, validateStatus: () => true });
const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });

const worker = new Worker<RegistrationJob>(
  QUEUE_NAME,
  async (job) => {
    const { sellerId, uploadId, row, product } = job.data;
    const res = await api.post(`/sellers/${sellerId}/products`, product, { headers: { 'Idempotency-Key': `${uploadId}:${row}` } });
    if (res.status >= 500) throw new Error(`the API answered ${res.status}`);
    return res.data as unknown;
  },
  {
    connection,
    prefix: config.queuePrefix,
    concurrency: config.workerConcurrency === 'auto' ? 16 : config.workerConcurrency,
  },
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void worker.close().finally(() => {
    connection.disconnect();
    process.exit(0);
  });
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);
process.on('message', (m: { type?: string }) => m?.type === 'shutdown' && stop());
await worker.waitUntilReady();
process.send?.({ type: 'ready' });
