/**
 * `status --watch`: a live view refreshed every second, per seller and upload:
 * a progress bar (cli-progress), the counts, the current rate, the next permit
 * and the ETA. When stdout is not a terminal it prints plain lines instead.
 */
import cliProgress from 'cli-progress';
import type { Config } from '../config.js';
import { formatDuration } from '../progress/eta.js';
import { noPool, readStatus, type StatusFilter, type StatusReport } from '../progress/status.js';
import { failingByUpload } from '../steering/outage.js';
import type { RedisClient } from '../redis.js';
import { safeText } from './exit.js';

interface Line {
  key: string;
  label: string;
  finished: number;
  total: number;
  text: string;
}

/** Rows per minute per seller, from the change between two reports. */
export class RateMeter {
  private last = new Map<string, { at: number; done: number }>();
  private rates = new Map<string, number>();

  update(report: StatusReport, now: number): void {
    for (const s of report.sellers) {
      const done = report.uploads.filter((u) => u.sellerId === s.sellerId).reduce((n, u) => n + u.registered + u.duplicate + u.failed, 0);
      const prev = this.last.get(s.sellerId);
      if (prev && now > prev.at) {
        const perMin = ((done - prev.done) * 60_000) / (now - prev.at);
        this.rates.set(s.sellerId, 0.5 * (this.rates.get(s.sellerId) ?? perMin) + 0.5 * perMin);
      }
      this.last.set(s.sellerId, { at: now, done });
    }
  }

  perMinute(sellerId: string): number {
    return Math.max(0, Math.round(this.rates.get(sellerId) ?? 0));
  }
}

export function watchLines(report: StatusReport, rates: RateMeter): Line[] {
  const lines: Line[] = [];
  const idle = noPool(report);
  const apiDown = report.api !== undefined && !report.api.available;
  // while it is: the rows of each upload whose calls got no usable answer
  const failing = failingByUpload(report.api?.failing ?? []);
  const held = (uploadId: string) => {
    const rows = failing.get(uploadId);
    return `held: the API is unavailable${rows ? ` (no answer for row${rows.length > 1 ? 's' : ''} ${rows.join(', ')})` : ''}`;
  };
  for (const s of report.sellers) {
    for (const u of report.uploads.filter((x) => x.sellerId === s.sellerId)) {
      const finished = u.registered + u.duplicate + u.failed + u.cancelled;
      const next = u.done ? 'done' : s.nextPermitInMs > 0 ? `next permit in ${formatDuration(s.nextPermitInMs)}` : 'sending';
      lines.push({
        key: `${s.sellerId}/${u.uploadId}`,
        label: `${safeText(s.sellerId)} ${u.uploadId.slice(0, 8)}`,
        finished,
        total: u.total,
        text: `registered ${u.registered} duplicate ${u.duplicate} failed ${u.failed}${u.cancelled ? ` cancelled ${u.cancelled}` : ''} pending ${u.pending} | ${rates.perMinute(s.sellerId)}/min (limit ${s.limit}/${s.windowMs / 1000}s) | ${next} | ${u.done ? 'ETA 0s' : s.paused ? `${s.paused.by === 'credentials' ? 'paused' : 'paused by the operator'}: ${safeText(s.paused.reason)}` : apiDown ? held(u.uploadId) : idle ? 'no worker pool is running' : `ETA ${formatDuration(s.etaMs)} (${s.pace === 'pool' ? 'pool' : 'rule'} sets the pace)`}`,
      });
    }
  }
  return lines;
}

export async function watchStatus(
  redis: RedisClient, config: Config, filter: StatusFilter,
  opts: { untilDone: boolean; intervalMs?: number; tty?: boolean; write?: (s: string) => void },
): Promise<StatusReport | undefined> {
  const tty = opts.tty ?? process.stdout.isTTY === true;
  const write = opts.write ?? ((s: string) => process.stdout.write(s));
  const rates = new RateMeter();
  let stop = false;
  const onSignal = () => { stop = true; };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const multibar = tty
    ? new cliProgress.MultiBar(
        { format: ' {label} |{bar}| {value}/{total} | {text}', hideCursor: true, clearOnComplete: false, barsize: 24, autopadding: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const bars = new Map<string, cliProgress.SingleBar>();
  let report: StatusReport | undefined;
  try {
    for (;;) {
      report = await readStatus(redis, config, filter);
      rates.update(report, Date.now());
      const lines = watchLines(report, rates);
      if (multibar) {
        for (const l of lines) {
          const bar = bars.get(l.key) ?? multibar.create(l.total, 0, { label: l.label, text: l.text });
          bars.set(l.key, bar);
          bar.setTotal(l.total);
          bar.update(l.finished, { label: l.label, text: l.text });
        }
      } else {
        const stamp = new Date().toISOString().slice(11, 19);
        for (const l of lines) write(`${stamp} ${l.label} ${l.finished}/${l.total} ${l.text}\n`);
        if (lines.length === 0) write(`${stamp} no uploads yet\n`);
      }
      if (stop || (opts.untilDone && report.uploads.length > 0 && report.uploads.every((u) => u.done))) break;
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000));
      if (stop) break;
    }
  } finally {
    multibar?.stop();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  return report;
}
