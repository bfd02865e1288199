/**
 * What the limiter's two scripts on a row's path cost Redis, one call at a time:
 * permit-next.lua (the permit asked behind BullMQ's completion) and
 * complete-send.lua (the send's place and the row's count). No pool, no API and
 * no BullMQ: the bench plays what they leave in Redis (a job hash, its lock and
 * its place at the head of the active list) and calls the two scripts as the
 * worker does (src/rate-limit/limiter.ts), with the keys src/keys.ts names, for
 * 200 sellers × 50 rows under a rule of 50 per 2 s: no seller is throttled, as
 * at capacity. The figure is INFO commandstats' usec per call (time inside the
 * script, its inner commands included), on a redis-server of its own with the
 * host otherwise idle: the scripts' own cost, without the 2-core contention that
 * inflates it several times in the capacity runs.
 *
 * `node dist/bench/script-cost.js` after a build. SCRIPT_COST_LUA (comma-separated
 * directories laid out as lua/, default lua/) compares copies of the scripts in
 * interleaved rounds, each one's order turned round in every other round: the way
 * to weigh a change to a script before it goes in. SCRIPT_COST_ROUNDS (default 8)
 * rounds; each figure is the median of the rounds. SCRIPT_COST_ANNOUNCING=1 asks
 * as the worker does against a marketplace that announces sellers' rules.
 */
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../src/dev/redis-server.js';
import { sellerKeys, uploadKeys } from '../src/keys.js';
import { jobIdFor, jobNameFor } from '../src/queue-shards.js';
import { ANSWER_SAMPLE_EVERY } from '../src/rate-limit/limiter.js';
import { LUA_DIR } from '../src/paths.js';
import { luaSourceIn } from '../src/lua-commands.js';
import { median, runMain } from './harness.js';

const SELLERS = 200;
const ROWS = 50;
/** Calls written together, as a busy pool's connection carries them. */
const BATCH = 32;
const RULE = { limit: 50, windowMs: 2000, guardMs: 100, holdMs: 30_000 };
const ROUNDS = Math.max(1, Number(process.env.SCRIPT_COST_ROUNDS ?? 8) || 8);
const DIRS = (process.env.SCRIPT_COST_LUA?.split(',') ?? [LUA_DIR]).map((d) => resolve(d));
/** SCRIPT_COST_ANNOUNCING=1: asked as against a marketplace that announces sellers' rules (each ask then counts the seller's recent answers). */
const ANNOUNCING = process.env.SCRIPT_COST_ANNOUNCING === '1' ? 1 : 0;
/** SCRIPT_COST_DESCRIPTION: characters of Korean text in each row's product description (default 0), as a sheet's description column adds. */
const DESCRIPTION_CHARS = Math.max(0, Number(process.env.SCRIPT_COST_DESCRIPTION ?? 0) || 0);
const DESCRIPTION = '상품 설명 '.repeat(Math.ceil(DESCRIPTION_CHARS / 6)).slice(0, DESCRIPTION_CHARS);

const NS = 'script-cost';
const QUEUE = `{${NS}}:registrations`;
const ACTIVE = `${QUEUE}:active`;
const JOB_PREFIX = `${QUEUE}:`;
const TOKEN = 'worker-token';

interface Shas {
  permitNext: string;
  completeSend: string;
}
interface Figures {
  permitNextUs: number;
  completeSendUs: number;
}

async function evalshaUsec(redis: Redis): Promise<number> {
  return Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
}

/** One round: every row of every seller asks its permit, then completes as registered. */
async function round(redis: Redis, shas: Shas, tag: string): Promise<Figures> {
  let permitUs = 0;
  let completeUs = 0;
  let sampled = 0;
  for (let row = 1; row <= ROWS; row++) {
    for (let first = 0; first < SELLERS; first += BATCH) {
      const sellers = Array.from({ length: Math.min(BATCH, SELLERS - first) }, (_, i) => ({ seller: `${tag}s${first + i}`, upload: `${tag}u${first + i}` }));
      // what BullMQ leaves before the ask: the job as the producer writes it (its name, id and row), its lock, the upload's counters
      const setup = redis.pipeline();
      for (const { seller, upload } of sellers) {
        const jobId = jobIdFor(upload, row);
        const product = { name: `Product ${row}`, price: 12900, stock: 30, sku: `SKU-${row}`, ...(DESCRIPTION ? { description: DESCRIPTION } : {}) };
        const data = JSON.stringify({ sellerId: seller, uploadId: upload, row, product });
        setup.hset(JOB_PREFIX + jobId, 'name', jobNameFor(seller, seller), 'data', data, 'ats', '1').set(`${JOB_PREFIX}${jobId}:lock`, TOKEN);
        if (row === 1) setup.hset(uploadKeys(NS, seller, upload).upload, 'total', ROWS);
      }
      await setup.exec();

      // each ask right behind its job's arrival at the head of the active list, as behind BullMQ's fetch
      const asks = redis.pipeline();
      for (const { upload } of sellers) {
        const jobId = jobIdFor(upload, row);
        asks.lpush(ACTIVE, jobId);
        asks.evalsha(shas.permitNext, 1, ACTIVE, JOB_PREFIX, TOKEN, NS, 'n1', '', RULE.limit, RULE.windowMs, RULE.guardMs, RULE.holdMs, -1, 0, '', 0, 1, 0, 0, ANNOUNCING);
        asks.lrem(ACTIVE, 1, jobId);
      }
      const before = await evalshaUsec(redis);
      const replies = (await asks.exec()) ?? [];
      const between = await evalshaUsec(redis);
      permitUs += between - before;

      const completions = redis.pipeline();
      sellers.forEach(({ seller, upload }, i) => {
        const [err, reply] = replies[i * 3 + 1]!;
        if (err) throw err;
        const [, sendId, granted, , , , , , slot] = reply as [string, string, number, number, number, number, number, number, number];
        if (granted !== 1) throw new Error(`${seller}: row ${row} was not granted at once; the figures would not be a row's path at capacity`);
        const k = sellerKeys(NS, seller);
        const u = uploadKeys(NS, seller, upload);
        completions.evalsha(shas.completeSend, 7, k.plan, k.sent, u.upload, u.rows, k.lag, k.rule, k.blocked,
          `${upload}:${row}`, sendId, row, 'registered', '{"status":"registered","productId":"P1"}',
          RULE.limit, RULE.windowMs, RULE.guardMs, 3600, 1, slot, sampled++ % ANSWER_SAMPLE_EVERY === 0 ? 1 : 0, 2, 0);
      });
      for (const [err] of (await completions.exec()) ?? []) if (err) throw err;
      completeUs += (await evalshaUsec(redis)) - between;
    }
  }
  const calls = SELLERS * ROWS;
  return { permitNextUs: permitUs / calls, completeSendUs: completeUs / calls };
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const shas: Shas[] = [];
    for (const dir of DIRS) {
      shas.push({
        permitNext: (await redis.script('LOAD', luaSourceIn(dir, 'permit-next.lua'))) as string,
        completeSend: (await redis.script('LOAD', luaSourceIn(dir, 'complete-send.lua'))) as string,
      });
    }
    const figures: Figures[][] = DIRS.map(() => []);
    await round(redis, shas[0]!, 'warm');
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? DIRS.map((_, d) => d) : DIRS.map((_, d) => d).reverse();
      for (const d of order) {
        const f = await round(redis, shas[d]!, `r${i}v${d}`);
        figures[d]!.push(f);
        process.stdout.write(`round ${i + 1} ${DIRS[d]}: permit-next ${f.permitNextUs.toFixed(1)} µs, complete-send ${f.completeSendUs.toFixed(1)} µs a call\n`);
      }
      await redis.flushall();
    }
    for (const [d, dir] of DIRS.entries()) {
      const p = median(figures[d]!.map((f) => f.permitNextUs));
      const c = median(figures[d]!.map((f) => f.completeSendUs));
      process.stdout.write(`${dir}: median permit-next ${p.toFixed(1)} µs, complete-send ${c.toFixed(1)} µs, a row ${(p + c).toFixed(1)} µs (Redis's time in the scripts, ${ROUNDS} rounds)\n`);
    }
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

runMain('script-cost', main);
