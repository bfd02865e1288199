/** `bulk-register upload <file> --seller <id> [--dry-run] [--json]` */
import type { Config } from '../config.js';
import { loadSheet, type LoadedSheet } from '../excel/load-sheet.js';
import { SELLER_ID } from '../keys.js';

import { bullConnection, connectChecked, createRedis } from '../redis.js';
import { QueueSet, resolveShardPrefixes } from '../queue.js';
import { submitUpload, type UploadSummary } from '../upload/submit-upload.js';
import { EXIT, UsageError, safeText } from './exit.js';
import { checkRedisSettings, refuseIfStrict } from '../redis-checks.js';

export interface UploadFlags {
  seller: string;
  dryRun?: boolean;
  json?: boolean;
  /** Refuse to enqueue into a Redis that may evict keys. */
  strict?: boolean;
}

export async function uploadCommand(file: string, flags: UploadFlags, config: Config): Promise<number> {
  if (!SELLER_ID.test(flags.seller)) {
    throw new UsageError(`--seller ${JSON.stringify(flags.seller)} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -`);
  }
  const sheet = await loadSheet(file);
  let summary: UploadSummary;
  if (!flags.dryRun && sheet.valid.length > 0) {
    const redis = createRedis(config, 'cli');
    await connectChecked(redis, config);
    try {
      const findings = await checkRedisSettings(redis);
      for (const f of findings) process.stderr.write(`warning: ${safeText(f.message)}\n`);
      refuseIfStrict(findings, Boolean(flags.strict));
    } catch (err) {
      redis.disconnect();
      throw err;
    }
    const connection = bullConnection(config, 'cli');
    const queues = QueueSet.on(connection, resolveShardPrefixes(config, redis as never));
    try {
      // enqueued means on a replica, when there is one
      summary = await submitUpload({ redis, queues, config, now: Date.now }, flags.seller, sheet, { dryRun: false, config });
    } finally {
      await queues.close();
      connection.disconnect();
      redis.disconnect();
    }
  } else {
    summary = await submitUpload(undefined, flags.seller, sheet, { dryRun: Boolean(flags.dryRun), config });
  }
  if (flags.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else process.stdout.write(summaryText(summary, sheet, Boolean(flags.dryRun)));

  if (sheet.valid.length === 0) {
    process.stderr.write(flags.json
      ? 'No valid row: nothing was enqueued. Fix the rows listed in "errors" and upload again.\n'
      : 'No valid row: nothing was enqueued. Fix the rows listed above and upload again.\n');
    return EXIT.failure;
  }
  return sheet.errors.length > 0 ? EXIT.someInvalid : EXIT.ok;
}

/** `upload`'s text summary (without --json). */
export function summaryText(s: UploadSummary, sheet: Pick<LoadedSheet, 'valid' | 'errors'>, dryRun: boolean): string {
  const out: string[] = [];
  const invalidRows = new Set(sheet.errors.map((e) => e.row)).size;
  out.push(`upload ${s.uploadId} for seller ${s.sellerId}: ${safeText(s.file)}`);
  out.push(`  rows read: ${s.rows}, valid: ${sheet.valid.length}, invalid: ${invalidRows}`);
  if (dryRun) out.push('  dry run: nothing was enqueued');
  else if (s.alreadyUploaded && s.enqueued === 0) out.push('  already uploaded: this file was enqueued before for this seller; nothing new was enqueued');
  else if (s.alreadyUploaded) out.push(`  enqueued again: ${s.enqueued} (this file was uploaded before for this seller and those rows were cancelled; no row is registered twice)`);
  else out.push(`  enqueued: ${s.enqueued}`);
  for (const w of s.warnings) out.push(`  warning: ${safeText(w)}`);
  if (sheet.errors.length > 0) {
    out.push('  invalid rows:');
    for (const e of sheet.errors.slice(0, 200)) out.push(`    row ${e.row}, ${e.column}: ${safeText(e.message)}`);
    if (sheet.errors.length > 200) out.push(`    ... and ${sheet.errors.length - 200} more (use --json for all)`);
  }
  return `${out.join('\n')}\n`;
}
