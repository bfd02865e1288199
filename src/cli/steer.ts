/**
 * `bulk-register pause --seller <id> | --all [--reason <text>]` and
 * `bulk-register resume --seller <id> | --all` (cli.md, "Steering uploads").
 * A pause is kept in Redis; every worker process reads it within PAUSE_POLL_MS.
 */
import type { Config } from '../config.js';
import { SELLER_ID, namespaceOf } from '../keys.js';
import { connectChecked, createRedis } from '../redis.js';
import { QueueSet } from '../queue.js';
import { ALL, PAUSE_POLL_MS, REASON_MAX, pauseReason, pauseSeller, resumeSeller } from '../steering/pauses.js';
import { cancelUpload } from '../steering/cancel.js';
import { limiterFor, readStatus, statusJson } from '../progress/status.js';
import { EXIT, UsageError, safeText } from './exit.js';

function target(opts: { seller?: string; all?: boolean }): string {
  if (opts.all && opts.seller) throw new UsageError('give --seller <id> or --all, not both');
  if (opts.all) return ALL;
  if (!opts.seller) throw new UsageError('give --seller <id> or --all');
  if (!SELLER_ID.test(opts.seller)) throw new UsageError(`seller ${JSON.stringify(opts.seller)} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -`);
  return opts.seller;
}

const who = (sellerId: string) => (sellerId === ALL ? 'every seller' : `seller ${sellerId}`);

export async function pauseCommand(opts: { seller?: string; all?: boolean; reason?: string; json?: boolean }, config: Config): Promise<number> {
  const sellerId = target(opts);
  const { reason, cut } = pauseReason(opts.reason);
  if (cut) process.stderr.write(`warning: the reason is kept to its first ${REASON_MAX} characters.\n`);
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  try {
    const { pause } = await pauseSeller(redis, namespaceOf(config.queuePrefix), sellerId, { reason, by: 'operator', since: Date.now() });
    // every worker process reads the pauses every PAUSE_POLL_MS: once this returns, no new call leaves
    await new Promise((r) => setTimeout(r, PAUSE_POLL_MS + 20));
    if (opts.json) process.stdout.write(`${JSON.stringify({ sellerId, paused: pause })}\n`);
    else process.stdout.write(`${who(sellerId)} paused: ${safeText(pause.reason)}. No new call leaves until \`bulk-register resume ${sellerId === ALL ? '--all' : `--seller ${sellerId}`}\`.\n`);
    return EXIT.ok;
  } finally {
    redis.disconnect();
  }
}

export async function resumeCommand(opts: { seller?: string; all?: boolean; json?: boolean }, config: Config): Promise<number> {
  const sellerId = target(opts);
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  const queues = QueueSet.on(redis, []);
  try {
    const lifted = await resumeSeller(redis, namespaceOf(config.queuePrefix), sellerId, queues);
    // only everyone's pause held the seller: it goes on, the others stay paused
    const othersStay = sellerId !== ALL && lifted?.except !== undefined;
    if (opts.json) process.stdout.write(`${JSON.stringify({ sellerId, resumed: lifted !== undefined, was: lifted ? { reason: lifted.reason, by: lifted.by, since: lifted.since } : null })}\n`);
    else if (othersStay) process.stdout.write(`${who(sellerId)} resumed; every other seller stays paused (by ${lifted.by}: ${safeText(lifted.reason)}) until \`bulk-register resume --all\`.\n`);
    else process.stdout.write(lifted ? `${who(sellerId)} resumed (was paused by ${lifted.by}: ${safeText(lifted.reason)}).\n` : `${who(sellerId)} was not paused.\n`);
    return EXIT.ok;
  } finally {
    await queues.close();
    redis.disconnect();
  }
}

export async function cancelCommand(opts: { upload: string; json?: boolean }, config: Config): Promise<number> {
  // no upload has such an id: an unknown upload (exit 1, as status says of it), before any connection
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(opts.upload)) {
    process.stderr.write(`No upload ${JSON.stringify(opts.upload)}: an upload id is the one \`upload\` or \`status\` printed.\n`);
    return EXIT.failure;
  }
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  const queues = QueueSet.on(redis, []);
  try {
    const done = await cancelUpload({ redis, config, queues, limiter: limiterFor(redis, config), now: Date.now }, opts.upload);
    if (!done) {
      process.stderr.write(`No upload ${opts.upload}: check the id with \`bulk-register status\`.\n`);
      return EXIT.failure;
    }
    const report = await readStatus(redis, config, { uploadId: opts.upload });
    const upload = statusJson(report).uploads[0];
    if (opts.json) process.stdout.write(`${JSON.stringify(upload ?? { uploadId: opts.upload })}\n`);
    else if (upload && done.alreadyDone) {
      process.stdout.write(`upload ${opts.upload} was already done: nothing to cancel (${upload.registered} registered, ${upload.duplicate} duplicate, ${upload.failed} failed).\n`);
    } else if (upload) {
      const inFlight = upload.pending > 0 ? `; ${upload.pending} in flight end as the marketplace answers` : '';
      process.stdout.write(`upload ${opts.upload} cancelled: ${upload.cancelled} rows not sent, ${upload.registered} registered, ${upload.duplicate} duplicate, ${upload.failed} failed${inFlight}. Upload the same file again to send the cancelled rows.\n`);
    }
    return EXIT.ok;
  } finally {
    await queues.close();
    redis.disconnect();
  }
}
