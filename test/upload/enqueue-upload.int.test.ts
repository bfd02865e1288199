/**
 * The producer's writes, against a private redis-server: an upload's first row is
 * added on its own, ahead of the rest (the pool can start on it while a big upload,
 * or many at once, are still being added), the rest of its first window next, on
 * its own too, and every row still lands once, at its
 * place in the fair round; rows beyond the seller's first window wait, delayed,
 * for their own window (src/upload/deferral.ts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Queue } from 'bullmq';
import { loadConfig, type Config } from '../../src/config.js';
import { QUEUE_NAME, namespaceOf, sellerKeys, uploadIndexKey, uploadKeys } from '../../src/keys.js';
import { createRedis, type RedisClient } from '../../src/redis.js';
import { PRIORITY, QueueSet, type RegistrationJob } from '../../src/queue.js';
import { queuesKey } from '../../src/queue-shards.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';
import { ROUND } from '../../src/upload/fair-share.js';
import { bringDeferredForward, deferLeadMs, ruleRaised } from '../../src/upload/deferral.js';
import { limitsCommand } from '../../src/cli/limits.js';
import { announceRule, setLimit } from '../../src/rate-limit/seller-limits.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { loadedSheetOf } from '../helpers/uploads.js';
import { lostRows } from '../../src/upload/lost-rows.js';
import type { LoadedSheet } from '../../src/excel/load-sheet.js';

let server: TestRedis;
let config: Config;
let redis: RedisClient;
let queue: Queue<RegistrationJob>;

beforeAll(async () => {
  server = await startRedis();
  config = loadConfig({ REDIS_URL: server.url, QUEUE_PREFIX: '{enq}' });
  redis = createRedis(config, 'cli');
  queue = new Queue<RegistrationJob>(QUEUE_NAME, { connection: { url: server.url } as never, prefix: config.queuePrefix });
});

afterAll(async () => {
  await queue?.close();
  redis?.disconnect();
  await server?.stop();
});

/** The producer's dependencies, on the queue emptied of the tests before. */
async function onEmptyQueue() {
  await queue.obliterate({ force: true });
  return { redis, queues: QueueSet.of(queue), config, now: Date.now };
}

describe('enqueueUpload', () => {
  it('adds the first row on its own, then the rest of its first window, then the deferred rows in bulk, each row once at its place in the round', async () => {
    const addBulk = vi.spyOn(queue, 'addBulk');
    const deps = { redis, queues: QueueSet.of(queue), config, now: Date.now };
    const result = await enqueueUpload(deps, 'E1', loadedSheetOf('E1', 600));
    expect(result).toMatchObject({ enqueued: 600, alreadyUploaded: false, queuePrefix: '{enq}' });
    // the default rule (100 per window): the first window reaches the queue in a write of its
    // own, not behind 150 deferred rows in the same MULTI
    expect(addBulk.mock.calls.map(([jobs]) => jobs.length)).toEqual([1, 99, 250, 250]);
    expect(addBulk.mock.calls[0]![0][0]!.data.row).toBe(2);
    const [, firstWindow, ...deferred] = addBulk.mock.calls.map(([jobs]) => jobs);
    expect(firstWindow!.map((j) => j.data.row)).toEqual(Array.from({ length: 99 }, (_, i) => i + 3));
    expect(firstWindow!.every((j) => !j.opts?.delay)).toBe(true);
    expect(deferred.flat().every((j) => (j.opts?.delay ?? 0) > 0)).toBe(true);

    // every row once: the first (a newcomer's, on an idle queue) at NEW_ROW, the k-th in the k-th round after;
    // the default rule's first window (100 rows) ready, the rest deferred
    expect(await queue.getPrioritizedCount()).toBe(100);
    const jobs = await queue.getJobs(['prioritized', 'delayed']);
    expect(jobs).toHaveLength(600);
    const byRow = new Map(jobs.map((j) => [j.data.row, j.priority]));
    expect(byRow.size).toBe(600);
    // each named for permit-next.lua: its seller by the name, its upload and row by the id
    expect(jobs.every((j) => j.name === 'register:E1' && j.id === `${result.uploadId}-${j.data.row}`)).toBe(true);
    expect(byRow.get(2)).toBe(PRIORITY.NEW_ROW);
    const start = PRIORITY.NEW_ROW + 2;
    for (let k = 1; k < 600; k++) expect(byRow.get(k + 2)).toBe(start + ROUND * k);

    // the writes that went out together all landed before the rows
    const ns = namespaceOf(config.queuePrefix);
    const up = await redis.hgetall(uploadKeys(ns, 'E1', result.uploadId).upload);
    expect(up).toMatchObject({ sellerId: 'E1', total: '600', queue: '{enq}', enqueued: '1' });
    expect(await redis.zscore(uploadIndexKey(ns), `E1/${result.uploadId}`)).not.toBeNull();
    expect(await redis.zscore(queuesKey(ns), '{enq}')).not.toBeNull();
    expect(await redis.ttl(uploadIndexKey(ns))).toBeGreaterThan(0);
    addBulk.mockRestore();
  });

  it('enqueues many uploads at once, every seller starting in the same round, and the same file again adds nothing', async () => {
    const deps = await onEmptyQueue();
    const sellers = Array.from({ length: 40 }, (_, i) => `M${i}`);
    const results = await Promise.all(sellers.map((s) => enqueueUpload(deps, s, loadedSheetOf(s, 30))));
    expect(results.every((r) => r.enqueued === 30)).toBe(true);
    const jobs = await queue.getJobs(['prioritized']);
    expect(jobs).toHaveLength(40 * 30);
    // nothing was waiting when they came: each seller's first row is a newcomer's of the first round
    const firsts = jobs.filter((j) => j.data.row === 2).map((j) => j.priority);
    expect(new Set(firsts)).toEqual(new Set([PRIORITY.NEW_ROW]));
    const again = await enqueueUpload(deps, 'M0', loadedSheetOf('M0', 30));
    expect(again).toMatchObject({ enqueued: 0, alreadyUploaded: true });
    expect(await queue.getPrioritizedCount()).toBe(40 * 30);
  });

  it("defers each row beyond the seller's first window to its own window, under the seller's own rule, and notes until when", async () => {
    const deps = await onEmptyQueue();
    // D1's own rule: 10 per 2 s (+ the 500 ms guard); 35 rows are 4 windows
    await setLimit(redis, config, 'D1', 10, 2000);
    const before = Date.now();
    await enqueueUpload(deps, 'D1', loadedSheetOf('D1', 35));
    const span = 2500;
    const lead = deferLeadMs(span);
    expect(lead).toBe(625);
    const jobs = await queue.getJobs(['prioritized', 'delayed']);
    expect(jobs).toHaveLength(35);
    const rows = jobs.map((j) => ({ row: j.data.row, delay: j.opts.delay ?? 0 }));
    rows.sort((x, y) => x.row - y.row);
    // rows are numbered from 2 (row 1 is the header): the k-th window (0-based) waits k spans less the lead
    for (const [i, r] of rows.entries()) {
      const window = Math.floor(i / 10);
      expect(r.delay, `row ${r.row}`).toBe(window === 0 ? 0 : window * span - lead);
    }
    expect(await queue.getPrioritizedCount()).toBe(10);
    expect(await queue.getDelayedCount()).toBe(25);
    // the seller counts as deferred until its last window can open (Redis's clock)
    const until = Number(await redis.get(sellerKeys(namespaceOf(config.queuePrefix), 'D1').defer));
    expect(until - before).toBeGreaterThanOrEqual(3 * span - 50);
    expect(until - Date.now()).toBeLessThanOrEqual(3 * span + 50);
    // an upload within one window defers nothing, and leaves the note alone
    await enqueueUpload(deps, 'D1', loadedSheetOf('D1-small', 10));
    expect(await queue.getDelayedCount()).toBe(25);
    expect(Number(await redis.get(sellerKeys(namespaceOf(config.queuePrefix), 'D1').defer))).toBe(until);
    // the deferred jobs are noted, to be brought forward when the rule is raised
    const k = sellerKeys(namespaceOf(config.queuePrefix), 'D1');
    const noted = await redis.smembers(k.deferred);
    expect(noted).toHaveLength(25);
    expect(new Set(noted)).toEqual(new Set(rows.slice(10).map((r) => `{enq}\t${jobs.find((j) => j.data.row === r.row)!.id}`)));
    expect(await redis.pttl(k.deferred)).toBeGreaterThan(3 * span);
    expect(await bringDeferredForward(redis, k, QueueSet.of(queue))).toBe(25);
    expect(await queue.getDelayedCount()).toBe(0);
    expect(await queue.getPrioritizedCount()).toBe(45);
    expect(await redis.exists(k.defer, k.deferred)).toBe(0);
  });

  it('brings deferred rows forward when `limits set` raises the rule, not when it lowers it', async () => {
    const deps = await onEmptyQueue();
    const defaults = { limit: config.rateLimitMax, windowMs: config.rateLimitWindowMs };
    expect(ruleRaised(null, '200/60000', defaults)).toBe(true);
    expect(ruleRaised('1/2000', null, defaults)).toBe(true);
    expect(ruleRaised('10/2000', null, defaults)).toBe(false);
    expect(ruleRaised('10/2000', '10/3000', defaults)).toBe(false);
    expect(ruleRaised(null, null, defaults)).toBe(false);
    await setLimit(redis, config, 'D2', 10, 2000);
    await enqueueUpload(deps, 'D2', loadedSheetOf('D2', 30));
    expect(await queue.getDelayedCount()).toBe(20);
    // lower: the deferred rows keep waiting (they would only be planned later still)
    await limitsCommand('set', { seller: 'D2', max: 5, windowMs: 2000 }, config);
    expect(await queue.getDelayedCount()).toBe(20);
    // higher: they go now, to be planned under it
    await limitsCommand('set', { seller: 'D2', max: 50, windowMs: 2000 }, config);
    expect(await queue.getDelayedCount()).toBe(0);
    expect(await queue.getPrioritizedCount()).toBe(30);
  });

  it('brings deferred rows forward when the rule is raised while they are still being added', async () => {
    const deps = await onEmptyQueue();
    const ns = namespaceOf(config.queuePrefix);
    const k = sellerKeys(ns, 'D3');
    // the configured rule (100 per window): 400 rows, the deferred 300 added 250 at a time.
    // The marketplace's first answer raises the rule after the first deferred batch is in the
    // queue and before the second is: the worker brings forward what it finds then
    const addBulk = queue.addBulk.bind(queue);
    let raised = 0;
    const spy = vi.spyOn(queue, 'addBulk').mockImplementation(async (jobs) => {
      const added = await addBulk(jobs);
      if (jobs.some((j) => (j.opts?.delay ?? 0) > 0) && raised++ === 0) {
        const before = await announceRule(redis, ns, 'D3', { max: 1000, windowMs: 60_000 });
        expect(ruleRaised(before, '1000/60000', { limit: config.rateLimitMax, windowMs: config.rateLimitWindowMs })).toBe(true);
        expect(await bringDeferredForward(redis, k, QueueSet.of(queue))).toBe(250);
      }
      return added;
    });
    try {
      await enqueueUpload(deps, 'D3', loadedSheetOf('D3', 400));
    } finally {
      spy.mockRestore();
    }
    expect(raised).toBe(2);
    // the 50 rows added after the raise were brought forward by the producer itself
    expect(await queue.getDelayedCount()).toBe(0);
    expect(await queue.getPrioritizedCount()).toBe(400);
    expect(await redis.exists(k.defer, k.deferred)).toBe(0);
  });

  it('leaves deferred rows waiting when the rule is not raised while they are added', async () => {
    const deps = await onEmptyQueue();
    const ns = namespaceOf(config.queuePrefix);
    await announceRule(redis, ns, 'D4', { max: 100, windowMs: 60_000 });
    await enqueueUpload(deps, 'D4', loadedSheetOf('D4', 250));
    expect(await queue.getDelayedCount()).toBe(150);
    expect(await redis.scard(sellerKeys(ns, 'D4').deferred)).toBe(150);
  });
});

describe('lost rows while a producer adds them', () => {
  /** A sheet whose stored rows status reads (loadedSheetOf keeps none). */
  const sheetOf = (seller: string, count: number): LoadedSheet => {
    const sheet = loadedSheetOf(seller, count);
    return { ...sheet, raw: sheet.valid.map(({ row }) => ({ row, values: {}, extra: {} })) };
  };

  /** Runs the upload with its second addBulk held until `release`; `during` runs while it is held. */
  async function heldUpload(seller: string, sheet: LoadedSheet, during: (uploadId: string) => Promise<void>) {
    const deps = await onEmptyQueue();
    const addBulk = queue.addBulk.bind(queue);
    let calls = 0;
    let held!: (uploadId: string) => void;
    const reached = new Promise<string>((resolve) => { held = resolve; });
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    const spy = vi.spyOn(queue, 'addBulk').mockImplementation(async (jobs) => {
      if (++calls === 2) {
        held(jobs[0]!.data.uploadId);
        await released;
      }
      return addBulk(jobs);
    });
    try {
      const upload = enqueueUpload(deps, seller, sheet);
      await during(await reached);
      release();
      return await upload;
    } finally {
      spy.mockRestore();
    }
  }

  it("judges no row lost until every row is in the queue, whatever the reader's clock, and leaves no key behind", async () => {
    const ns = namespaceOf(config.queuePrefix);
    const sheet = sheetOf('L1', 250);
    const result = await heldUpload('L1', sheet, async (uploadId) => {
      // the reader's clock 10 minutes ahead of the producer's: its grace alone would be long over
      expect(await lostRows(redis, config, ns, 'L1', uploadId, Date.now() + 600_000)).toEqual([]);
      expect(await redis.exists(uploadKeys(ns, 'L1', uploadId).enqueuing)).toBe(1);
    });
    expect(result.enqueued).toBe(250);
    expect(await redis.exists(uploadKeys(ns, 'L1', result.uploadId).enqueuing)).toBe(0);
    expect(await lostRows(redis, config, ns, 'L1', result.uploadId, Date.now() + 600_000)).toEqual([]);
    // a producer that died leaves its rows to be judged: here the jobs of the rows are gone
    await queue.obliterate({ force: true });
    expect(await lostRows(redis, config, ns, 'L1', result.uploadId, Date.now())).toHaveLength(250);
  });

  it('judges no cancelled row lost while the same file sent again adds it back', async () => {
    const ns = namespaceOf(config.queuePrefix);
    const sheet = sheetOf('L2', 250);
    const first = await enqueueUpload(await onEmptyQueue(), 'L2', sheet);
    // every row cancelled before it was sent, as cancel leaves them (steering/cancel.ts)
    const keys = uploadKeys(ns, 'L2', first.uploadId);
    await queue.obliterate({ force: true });
    await redis.hset(keys.upload, 'cancelledAt', Date.now(), 'cancelled', 250);
    await redis.hset(keys.rows, Object.fromEntries(sheet.valid.map(({ row }) => [row, JSON.stringify({ status: 'cancelled' })])));
    const again = await heldUpload('L2', sheet, async (uploadId) => {
      expect(uploadId).toBe(first.uploadId);
      expect(await redis.hlen(keys.rows)).toBe(0);
      expect(await lostRows(redis, config, ns, 'L2', uploadId, Date.now())).toEqual([]);
    });
    expect(again).toMatchObject({ enqueued: 250, alreadyUploaded: true });
    expect(await redis.exists(keys.enqueuing)).toBe(0);
    expect(await lostRows(redis, config, ns, 'L2', first.uploadId, Date.now())).toEqual([]);
  });
});

describe('the same file uploaded at once', () => {
  it('the same file uploaded four times at once enqueues its rows once: one upload reports them, the others report it already uploaded with none', async () => {
    const deps = await onEmptyQueue();
    const sheet = loadedSheetOf('TWICE', 30);
    const results = await Promise.all([1, 2, 3, 4].map(() => enqueueUpload(deps, 'TWICE', sheet)));
    expect(results.filter((r) => !r.alreadyUploaded)).toMatchObject([{ enqueued: 30 }]);
    expect(results.filter((r) => r.alreadyUploaded)).toMatchObject([{ enqueued: 0 }, { enqueued: 0 }, { enqueued: 0 }]);
    expect(new Set(results.map((r) => r.uploadId)).size).toBe(1);
    expect(await queue.getJobs(['prioritized', 'delayed', 'waiting'])).toHaveLength(30);
    const up = await redis.hgetall(uploadKeys(namespaceOf(config.queuePrefix), 'TWICE', results[0]!.uploadId).upload);
    expect(up).toMatchObject({ total: '30', enqueued: '1' });
  });

  it('an upload whose producer died midway (its claim left behind) is enqueued by the next once the claim lapses', async () => {
    const deps = await onEmptyQueue();
    const sheet = loadedSheetOf('DIED', 5);
    const first = await enqueueUpload(deps, 'DIED', sheet);
    // as if its producer had claimed it and died before marking it enqueued
    const keys = uploadKeys(namespaceOf(config.queuePrefix), 'DIED', first.uploadId);
    await redis.hdel(keys.upload, 'enqueued');
    await redis.set(keys.enqueuing, '1', 'PX', 600);
    const again = await enqueueUpload(deps, 'DIED', sheet);
    expect(again).toMatchObject({ uploadId: first.uploadId, enqueued: 5, alreadyUploaded: false });
    expect(await redis.hget(keys.upload, 'enqueued')).toBe('1');
  });
});
