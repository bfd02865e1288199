/**
 * Rows whose jobs Redis lost (a restart from an AOF missing its last second, a
 * failover to a replica that was behind) show in status as lost, and the upload
 * ends instead of waiting for them forever. A real redis-server; the loss is
 * made by deleting two jobs' keys, as a lost write leaves them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import { loadConfig } from '../../src/config.js';
import { QUEUE_NAME, namespaceOf, uploadKeys } from '../../src/keys.js';
import { sampleProducts } from '../../src/fixtures/build-sheet.js';
import { bullConnection, createRedis, type RedisClient } from '../../src/redis.js';
import { QueueSet, jobIdFor, type RegistrationJob } from '../../src/queue.js';
import type { LoadedSheet } from '../../src/excel/load-sheet.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';
import { readStatus } from '../../src/progress/status.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let server: TestRedis;
let redis: RedisClient;
const config = () => loadConfig({ REDIS_URL: server.url, QUEUE_PREFIX: '{lost-rows}' });

beforeAll(async () => {
  server = await startRedis();
  redis = createRedis(config(), 'cli');
  await redis.connect();
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

function sheetOf(seller: string, count: number): LoadedSheet {
  const valid = sampleProducts(seller, count).map((product, i) => ({ row: i + 2, product, attributes: {} }));
  return {
    rows: count, errors: [], warnings: [], file: `${seller}.xlsx`, valid, columns: [], extraColumns: [],
    raw: valid.map(({ row, product }) => ({ row, values: { sku: product.sku }, extra: {} })),
    sha256: createHash('sha256').update(`${seller}:${count}`).digest('hex'),
  } as LoadedSheet;
}

describe('rows Redis lost', () => {
  it('are counted as lost, not pending, and the upload is done once every other row is', async () => {
    const c = config();
    const connection = bullConnection(c, 'cli');
    const queue = new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix: c.queuePrefix });
    const { uploadId } = await enqueueUpload({ redis, queues: QueueSet.of(queue), config: c, now: Date.now }, 'LR1', sheetOf('LR1', 5));
    await queue.close();
    connection.disconnect();
    const ns = namespaceOf(c.queuePrefix);

    // every job still queued: nothing is lost
    let [u] = (await readStatus(redis, c)).uploads;
    expect(u).toMatchObject({ total: 5, pending: 5, lost: 0, done: false });

    // two jobs gone; of the three left, all finish
    await redis.del(`${c.queuePrefix}:${QUEUE_NAME}:${jobIdFor(uploadId, 2)}`, `${c.queuePrefix}:${QUEUE_NAME}:${jobIdFor(uploadId, 3)}`);
    [u] = (await readStatus(redis, c)).uploads;
    expect(u).toMatchObject({ total: 5, pending: 3, lost: 2, done: false });
    const rows = uploadKeys(ns, 'LR1', uploadId).rows;
    for (const row of [4, 5, 6]) await redis.hset(rows, String(row), '{"status":"registered"}');
    await redis.hincrby(uploadKeys(ns, 'LR1', uploadId).upload, 'registered', 3);
    [u] = (await readStatus(redis, c)).uploads;
    expect(u).toMatchObject({ total: 5, registered: 3, pending: 0, lost: 2, done: true });
  });
});
