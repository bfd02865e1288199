/** `bulk-register status [--upload <id>] [--seller <id>] [--wait] [--json]` */
import type { Config } from '../config.js';
import { formatDuration } from '../progress/eta.js';
import { readStatus, statusJson, type StatusReport } from '../progress/status.js';
import { connectChecked, createRedis } from '../redis.js';
import { EXIT } from './exit.js';
import { watchStatus } from './status-watch.js';

export interface StatusFlags {
  upload?: string;
  seller?: string;
  wait?: boolean;
  watch?: boolean;
  json?: boolean;
  intervalMs?: number;
}

export async function statusCommand(flags: StatusFlags, config: Config): Promise<number> {
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  try {
    const filter = { uploadId: flags.upload, sellerId: flags.seller };
    let report = await readStatus(redis, config, filter);
    if ((flags.upload || flags.seller) && report.uploads.length === 0) {
      const what = flags.upload ? `upload ${flags.upload}` : `seller ${flags.seller}`;
      process.stderr.write(`No ${what} is known (it may have expired): check the id with \`bulk-register status\`.\n`);
      return EXIT.failure;
    }
    if (flags.watch) {
      await watchStatus(redis, config, filter, { untilDone: Boolean(flags.wait) });
      return EXIT.ok;
    }
    if (flags.wait) {
      let stop = false;
      const onSignal = () => { stop = true; };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      while (!stop && report.uploads.some((u) => !u.done)) {
        await new Promise((r) => setTimeout(r, flags.intervalMs ?? 1000));
        report = await readStatus(redis, config, filter);
      }
    }
    process.stdout.write(flags.json ? `${JSON.stringify(statusJson(report))}\n` : formatStatus(report));
    return EXIT.ok;
  } finally {
    redis.disconnect();
  }
}

export function formatStatus(report: StatusReport): string {
  if (report.uploads.length === 0) return 'No uploads yet.\n';
  const lines: string[] = [];
  for (const s of report.sellers) {
    const next = s.nextPermitInMs > 0 ? `next permit in ${formatDuration(s.nextPermitInMs)}` : 'permit free now';
    lines.push(`seller ${s.sellerId}  (${s.limit} per ${s.windowMs} ms, ${next}, ${s.waitingForPermit} waiting for a permit, ETA ${formatDuration(s.etaMs)}${s.etaMs > 0 ? `, set by ${s.pace === 'pool' ? 'the pool (rows wait for a worker)' : 'its rule'}` : ''})`);
    for (const u of report.uploads.filter((x) => x.sellerId === s.sellerId)) {
      const finished = u.registered + u.duplicate + u.failed;
      const pct = u.total > 0 ? Math.floor((finished * 100) / u.total) : 100;
      lines.push(
        `  upload ${u.uploadId}  ${u.done ? 'done' : `${pct}%`}  total ${u.total}  registered ${u.registered}  duplicate ${u.duplicate}  failed ${u.failed}  pending ${u.pending}${u.lost ? `  lost ${u.lost} (Redis lost their jobs: upload them again)` : ''}${u.invalid ? `  (invalid at upload: ${u.invalid})` : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
