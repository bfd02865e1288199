/**
 * The console's live updates scale with Redis, not with viewers: Redis commands
 * per second with 1 and with 100 open SSE streams (seller pages, each its own
 * scope) on one console process. Seeded with 20 sellers' uploads still pending
 * (no pool runs, so the figures are the console's own), on a redis-server of its own.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startConsole } from '../../src/cli/console.js';
import { signSellerToken } from '../../src/console/access.js';
import { loadConfig } from '../../src/config.js';
import { startRedisServer } from '../../src/dev/redis-server.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { QUEUE_NAME } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QueueSet, type RegistrationJob } from '../../src/queue.js';
import { bullConnection, connectChecked, createRedis } from '../../src/redis.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';
import { round, say } from '../harness.js';

const SELLERS = 20;
const ROWS = 50;
/** Long enough to hold one of the reader's lost-row checks (every 15 s). */
const WINDOW_MS = 15_000;

export interface ConsoleResult {
  sellers: number;
  uploads: number;
  windowMs: number;
  /** Redis commands/s over the window, the console alone, with 1 and 100 SSE clients. */
  commandsPerSec: { clients1: number; clients100: number };
  /** clients100 ÷ clients1 (target ≤ 1.5). */
  ratio: number;
  /** The shared reader's snapshots in each window. */
  snapshots: { clients1: number; clients100: number };
  /** `status` events the clients received in each window (every client gets its own). */
  eventsReceived: { clients1: number; clients100: number };
}

async function totalCommands(redis: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0);
}

/** An open SSE stream whose `status` events are counted and dropped. */
function openStream(url: string): { events: () => number; close: () => void } {
  const controller = new AbortController();
  let events = 0;
  void (async () => {
    const res = await fetch(url, { signal: controller.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      events += (decoder.decode(value).match(/^event: status$/gm) ?? []).length;
    }
  })().catch(() => undefined);
  return { events: () => events, close: () => controller.abort() };
}

export async function consoleScenario(): Promise<ConsoleResult> {
  const server = await startRedisServer();
  const secret = 'bench-console-secret';
  const config = loadConfig({ REDIS_URL: server.url, CONSOLE_PORT: '0', CONSOLE_SECRET: secret, QUEUE_PREFIX: '{bench-console}' });
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  const connection = bullConnection(config, 'cli');
  const queue = new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix: config.queuePrefix });
  const counter = new Redis(server.url);
  const web = await startConsole(config, createLogger({ level: 'warn', name: 'bench-console' }));
  const streams: Array<ReturnType<typeof openStream>> = [];
  try {
    for (let i = 0; i < SELLERS; i++) {
      const sellerId = `console-${i}`;
      const sheet = await parseSheetBytes(await buildProductSheet(sampleProducts(`CS${i}`, ROWS)), `${sellerId}.xlsx`);
      await enqueueUpload({ redis, queues: QueueSet.of(queue), config, now: Date.now }, sellerId, sheet);
    }
    const link = (i: number) => `${web.url}/api/events?token=${signSellerToken(secret, `console-${i % SELLERS}`, Date.now() + 3_600_000)}`;

    const measure = async (clients: number) => {
      while (streams.length < clients) streams.push(openStream(link(streams.length)));
      await new Promise((r) => setTimeout(r, 2000)); // every stream open and served once
      const reads = web.feed.reads;
      const events = streams.reduce((n, s) => n + s.events(), 0);
      const before = await totalCommands(counter);
      await new Promise((r) => setTimeout(r, WINDOW_MS));
      // the two INFO calls of this measurement are not the console's
      const commands = (await totalCommands(counter)) - before - 1;
      return {
        perSec: round((commands * 1000) / WINDOW_MS, 1),
        snapshots: web.feed.reads - reads,
        events: streams.reduce((n, s) => n + s.events(), 0) - events,
      };
    };
    say(`bench: console: ${SELLERS} sellers' uploads pending, 1 then 100 SSE clients, ${WINDOW_MS / 1000} s each ...`);
    const one = await measure(1);
    const hundred = await measure(100);
    const result: ConsoleResult = {
      sellers: SELLERS,
      uploads: SELLERS,
      windowMs: WINDOW_MS,
      commandsPerSec: { clients1: one.perSec, clients100: hundred.perSec },
      ratio: round(hundred.perSec / one.perSec, 3),
      snapshots: { clients1: one.snapshots, clients100: hundred.snapshots },
      eventsReceived: { clients1: one.events, clients100: hundred.events },
    };
    say(`  console: ${one.perSec} Redis commands/s with 1 SSE client, ${hundred.perSec} with 100 (ratio ${result.ratio}); snapshots ${one.snapshots}/${hundred.snapshots}, events received ${one.events}/${hundred.events}`);
    return result;
  } finally {
    for (const s of streams) s.close();
    await web.close();
    await queue.close().catch(() => undefined);
    connection.disconnect();
    redis.disconnect();
    counter.disconnect();
    await server.stop();
  }
}
