/** Many sellers' uploads enqueued in-process (as `upload` would), for tests at a scale the CLI would take minutes for. */
import { loadConfig } from '../../src/config.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { QueueSet, resolveShardPrefixes } from '../../src/queue.js';
import { bullConnection, connectChecked, createRedis } from '../../src/redis.js';
import { enqueueUpload } from '../../src/upload/enqueue-upload.js';

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
