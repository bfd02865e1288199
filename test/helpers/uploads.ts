/** Uploads for tests: through the CLI, or many sellers' enqueued in-process (as `upload` would) at a scale the CLI would take minutes for. */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { parseSheetBytes, type LoadedSheet } from '../../src/excel/load-sheet.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { Queue } from 'bullmq';
import type { Config } from '../../src/config.js';
import { QUEUE_NAME } from '../../src/keys.js';
import { QueueSet, resolveShardPrefixes, type RegistrationJob } from '../../src/queue.js';
import { bullConnection, connectChecked, createRedis, type RedisClient } from '../../src/redis.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';
import { runCli } from './cli.js';

/** `products` written as a sheet in `dir` and uploaded for `seller` with `bulk-register upload --json`; its upload id. Throws when the upload does not exit 0. */
export async function uploadProducts(env: NodeJS.ProcessEnv, dir: string, seller: string, products: ReturnType<typeof sampleProducts>): Promise<string> {
  const file = join(dir, `${seller}.xlsx`);
  writeFileSync(file, await buildProductSheet(products));
  const res = await runCli(['upload', file, '--seller', seller, '--json'], env);
  if (res.code !== 0) throw new Error(`upload for ${seller} exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout).uploadId;
}

/**
 * `bulk-register status --upload <id> --wait --json`: the status once the upload has no
 * unfinished row (its `uploads[0]` the upload's final state). Throws with what the command
 * said when it does not exit 0 within `timeoutMs`.
 */
export async function finishedStatus(env: NodeJS.ProcessEnv, uploadId: string, timeoutMs: number) {
  const res = await runCli(['status', '--wait', '--upload', uploadId, '--json'], env, timeoutMs);
  if (res.code !== 0) throw new Error(`status --wait for ${uploadId} exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout);
}

/** Enqueues one upload of `rows` products for each of the sellers `{prefix}-0` .. `{prefix}-{sellers - 1}`. */
export async function uploadMany(env: NodeJS.ProcessEnv, prefix: string, sellers: number, rows: number): Promise<void> {
  const config = loadConfig(env);
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  const connection = bullConnection(config, 'cli');
  try {
    const queues = QueueSet.on(connection, resolveShardPrefixes(config, redis as never));
    const sheets = await Promise.all(Array.from({ length: sellers }, async (_, i) =>
      parseSheetBytes(await buildProductSheet(sampleProducts(`${prefix}${i}`, rows)), `${prefix.toLowerCase()}-${i}.xlsx`)));
    for (let i = 0; i < sellers; i++) await enqueueUpload({ redis, queues, config, now: Date.now }, `${prefix}-${i}`, sheets[i]!);
  } finally {
    redis.disconnect();
    connection.disconnect();
  }
}

/** A loaded sheet of `count` valid sample products for `seller` (rows 2..), without parsing a file. */
export function loadedSheetOf(seller: string, count: number): LoadedSheet {
  return {
    rows: count, errors: [], warnings: [], raw: [], columns: [], extraColumns: [], file: `${seller}.xlsx`,
    valid: sampleProducts(seller, count).map((product, i) => ({ row: i + 2, product, attributes: {} })),
    sha256: createHash('sha256').update(`${seller}:${count}`).digest('hex'),
  };
}

/** A sheet's bytes read as `upload` reads them and enqueued for `seller` on the queue of `config`, in-process. */
export async function enqueueSheet(redis: RedisClient, config: Config, seller: string, bytes: Buffer) {
  const sheet = await parseSheetBytes(bytes, `${seller}.xlsx`);
  const connection = bullConnection(config, 'cli');
  const queue = new Queue<RegistrationJob>(QUEUE_NAME, { connection, prefix: config.queuePrefix });
  try {
    const result = await enqueueUpload({ redis, queues: QueueSet.of(queue), config, now: Date.now }, seller, sheet);
    return { sheet, uploadId: result.uploadId, result };
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
