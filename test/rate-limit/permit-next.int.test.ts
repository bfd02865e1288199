/**
 * permit-next.lua against BullMQ itself: the job BullMQ's completion fetches is
 * locked with the finishing worker's token and pushed to the head of the active
 * list, and the script finds it there (or, when several completions went in
 * one write, as deep as their asks), and only it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { commandCalls, limiterOn } from '../helpers/limiter.js';
import { QUEUE_NAME } from '../../src/keys.js';
import { jobIdFor, jobNameFor } from '../../src/queue.js';
import { SellerLimiter } from '../../src/rate-limit/limiter.js';
import type { RedisClient } from '../../src/redis.js';

let server: TestRedis;
beforeAll(async () => { server = await startRedis(); });
afterAll(async () => { await server?.stop(); });

/** A queue, a BullMQ worker fetching by hand, and a limiter on `prefix`; closed after `fn`. */
async function onQueue(prefix: string, limit: number, fn: (s: {
  queue: Queue; worker: Worker; limiter: SellerLimiter; redis: RedisClient; keys: { active: string; jobPrefix: string };
}) => Promise<void>): Promise<void> {
  const connection = new Redis({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: null });
  const queue = new Queue(QUEUE_NAME, { connection, prefix });
  // BullMQ closes the connections it makes, not one it is given
  const workerConnection = connection.duplicate();
  const worker = new Worker(QUEUE_NAME, null, { connection: workerConnection, prefix });
  const { limiter, redis } = limiterOn(server, { limit, windowMs: 1000, guardMs: 0, queuePrefix: prefix });
  try {
    await fn({ queue, worker, limiter, redis, keys: { active: `${prefix}:${QUEUE_NAME}:active`, jobPrefix: `${prefix}:${QUEUE_NAME}:` } });
  } finally {
    await worker.close();
    await queue.close();
    redis.disconnect();
    connection.disconnect();
    workerConnection.disconnect();
  }
}

describe('permit-next.lua', () => {
  it("finds the job BullMQ's completion fetched, and runs the limiter for its row", async () => {
    await onQueue('{pn}', 2, async ({ queue, worker, limiter, redis, keys }) => {
      for (const row of [2, 3, 4]) await queue.add('r', { sellerId: 'N1', uploadId: 'up', row, product: {} }, { jobId: `up-${row}`, priority: 2 });
      const token = 'worker-a:0';
      const first = (await worker.getNextJob(token))!;
      // before the completion, the newest active job is the one being finished: never asked for
      expect(await limiter.permitNext(keys, token, 'n0', { jobId: first.id!, sellerId: 'N1' })).toBeUndefined();

      const next = (await first.moveToCompleted('ok', token, true)) as unknown as [unknown, string];
      const nextId = next[1];
      expect(nextId).toBe('up-3');
      const ahead = await limiter.permitNext(keys, token, 'n1', { jobId: first.id!, sellerId: 'N1' });
      expect(ahead).toMatchObject({ jobId: 'up-3', sendId: 'up:3#n1', permit: { granted: true, waitMs: 0, limit: 2 } });
      // the limiter counted it: the seller's second send of the window is its last
      expect(await redis.zscore(limiter.keys('N1').sent, 'up:3#n1')).not.toBeNull();
      const third = await limiter.acquire('N1', 'up:9', 'up:9#x');
      expect(third.granted).toBe(true);
      expect((await limiter.acquire('N1', 'up:10', 'up:10#x')).granted).toBe(false);

      // another worker's token, or a seller outside the limiter's prefix: nothing asked
      expect(await limiter.permitNext(keys, 'worker-b:0', 'n2', { jobId: first.id!, sellerId: 'N1' })).toBeUndefined();
      const narrow = new SellerLimiter(redis, limiter.settings, 'other--');
      expect(await narrow.permitNext(keys, token, 'n3', { jobId: first.id!, sellerId: 'N1' })).toBeUndefined();
    });
  });

  it('finds each job when several completions and their asks went in one write, and looks no deeper than the asks', async () => {
    await onQueue('{pn3}', 10, async ({ queue, worker, limiter, redis, keys }) => {
      for (const row of [1, 2, 3, 4, 5, 6]) await queue.add('r', { sellerId: 'D1', uploadId: 'd', row, product: {} }, { jobId: `d-${row}`, priority: row });
      const [a, b, c] = ['worker-a:1', 'worker-a:2', 'worker-a:3'];
      const jobA = (await worker.getNextJob(a))!;
      const jobB = (await worker.getNextJob(b))!;
      const jobC = (await worker.getNextJob(c))!;
      // three slots finish in one turn: their completions fetch d-4, d-5, d-6 (each pushed to the
      // head of the active list), and the asks follow them all, in the same order
      for (const [job, token] of [[jobA, a], [jobB, b], [jobC, c]] as const) await job.moveToCompleted('ok', token, true);
      const ask = (token: string, finished: string, nonce: string, together: number, expectedAt?: number) =>
        limiter.permitNext(keys, token, nonce, { jobId: finished, sellerId: 'D1' }, together, expectedAt);
      // each told where its job lies (the first ask's behind the two fetched after it): one lock read each
      const locks = () => commandCalls(redis, 'get');
      let before = await locks();
      expect(await ask(a, jobA.id!, 'a', 3, 2)).toMatchObject({ jobId: 'd-4', permit: { granted: true } });
      expect(await ask(b, jobB.id!, 'b', 3, 1)).toMatchObject({ jobId: 'd-5', permit: { granted: true } });
      expect(await ask(c, jobC.id!, 'c', 3, 0)).toMatchObject({ jobId: 'd-6', permit: { granted: true } });
      expect(await locks()).toBe(before + 3);
      // told wrongly (a completion that fetched nothing moves the rest), the ask looks at the others too
      before = await locks();
      expect(await ask(a, jobA.id!, 'a1', 3, 0)).toMatchObject({ jobId: 'd-4', permit: { granted: true } });
      expect(await locks()).toBe(before + 3);
      // told it went alone, the first ask looks only at the head (d-6, not its job): none
      expect(await ask(a, jobA.id!, 'a2', 1)).toBeUndefined();
      // and no deeper than the asks of its write, whatever it is told
      expect(await ask(a, jobA.id!, 'a3', 2, 5)).toBeUndefined();
    });
  });

  it('looks for no slot for a job on its first start, and finds the one a job started again holds', async () => {
    await onQueue('{pn4}', 1, async ({ queue, worker, limiter, redis, keys }) => {
      const zscores = () => commandCalls(redis, 'zscore');
      for (const row of [1, 2]) await queue.add('r', { sellerId: 'F1', uploadId: 'f', row, product: {} }, { jobId: `f-${row}`, priority: row });
      // the seller's one send of the window is taken
      expect((await limiter.acquire('F1', 'other:1', 'other:1#x')).granted).toBe(true);
      const token = 'worker-a:0';
      const first = (await worker.getNextJob(token))!;
      await first.moveToCompleted('ok', token, true);
      const before = await zscores();
      const ahead = await limiter.permitNext(keys, token, 'n1', { jobId: first.id!, sellerId: 'F1' });
      // f-2 on its first start: planned for the next window, without a look for its slot
      expect(ahead).toMatchObject({ jobId: 'f-2', permit: { granted: false } });
      expect(await zscores()).toBe(before);
      const slot = ahead!.permit.slot;
      expect(await redis.zscore(limiter.keys('F1').plan, 'f:2')).toBe(String(slot));

      // delayed until its slot, then started again by another worker: it keeps that slot
      const job = (await queue.getJob('f-2'))!;
      await job.moveToDelayed(Date.now() + 60_000, token);
      await job.promote();
      await queue.add('r', { sellerId: 'F1', uploadId: 'f', row: 0 }, { jobId: 'f-0', priority: 1 });
      const other = 'worker-b:0';
      const zero = (await worker.getNextJob(other))!;
      expect(zero.id).toBe('f-0');
      await zero.moveToCompleted('ok', other, true);
      const reads = await zscores();
      const again = await limiter.permitNext(keys, other, 'n2', { jobId: 'f-0', sellerId: 'F1' });
      expect(again).toMatchObject({ jobId: 'f-2', permit: { granted: false, slot } });
      expect(await zscores()).toBe(reads + 1);
    });
  });

  it("names the row from the job's name and id, as the producer writes them, without its data; with the seller's home too", async () => {
    await onQueue('{pn5}', 10, async ({ queue, worker, limiter, redis, keys }) => {
      // data that names no seller, with a sheet's long description: were it read, no permit would come
      const rows = [
        { sellerId: 'M1', home: 'M1', uploadId: 'up-5', row: 12 },
        { sellerId: 'M2', home: 'pn5', uploadId: 'up-6', row: 3 },
      ];
      for (const [i, r] of rows.entries()) {
        await queue.add('r', { sellerId: r.sellerId, uploadId: 'f', row: i }, { jobId: `f-${i}`, priority: 1 });
        await queue.add(jobNameFor(r.sellerId, r.home), { product: { description: '설명 '.repeat(2000) } }, { jobId: jobIdFor(r.uploadId, r.row), priority: 2 });
        const token = `worker-a:${i}`;
        const finished = (await worker.getNextJob(token))!;
        await finished.moveToCompleted('ok', token, true);
        const ahead = await limiter.permitNext(keys, token, `n${i}`, { jobId: finished.id!, sellerId: r.sellerId });
        expect(ahead).toMatchObject({ jobId: `${r.uploadId}-${r.row}`, sendId: `${r.uploadId}:${r.row}#n${i}`, permit: { granted: true } });
        expect(await redis.zscore(limiter.keys(r.sellerId, r.home).plan, `${r.uploadId}:${r.row}`)).not.toBeNull();
      }
    });
  });

  it('reads the row from the job as the producer writes it, and from any other layout of the same JSON', async () => {
    await onQueue('{pn2}', 10, async ({ queue, worker, limiter, redis, keys }) => {
      const layouts: Array<Record<string, unknown>> = [
        // the producer's order (src/upload/enqueue-upload.ts)
        { sellerId: 'L_1-x', uploadId: 'u-1', row: 7, product: { name: '"sellerId":"other"' } },
        // the same fields in another order, and a row number without a product after it
        { product: { sku: 'A' }, row: 8, uploadId: 'u-1', sellerId: 'L_1-x' },
        { sellerId: 'L_1-x', uploadId: 'u-1', row: 9 },
      ];
      for (const [i, data] of layouts.entries()) {
        const row = data.row as number;
        // the job being finished, then the row BullMQ's completion fetches
        await queue.add('r', { sellerId: 'L_1-x', uploadId: 'f', row: i }, { jobId: `f-${i}`, priority: 1 });
        await queue.add('r', data, { jobId: `u-1-${row}`, priority: 2 });
        const token = `worker-a:${i}`;
        const finished = (await worker.getNextJob(token))!;
        const next = (await finished.moveToCompleted('ok', token, true)) as unknown as [unknown, string];
        expect(next[1]).toBe(`u-1-${row}`);
        const ahead = await limiter.permitNext(keys, token, `n${row}`, { jobId: finished.id!, sellerId: 'L_1-x' });
        expect(ahead).toMatchObject({ jobId: `u-1-${row}`, sendId: `u-1:${row}#n${row}`, permit: { granted: true } });
        expect(await redis.zscore(limiter.keys('L_1-x').plan, `u-1:${row}`)).not.toBeNull();
      }
    });
  });
});
