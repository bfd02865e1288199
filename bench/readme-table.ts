/**
 * The README's "Measured" table, written by a full `npm run bench` between two
 * markers, so that the figures a reader sees first are one run's, the run
 * bench/RESULTS.md holds. Pure: the README's text in, the new text out.
 */
import type { ScenarioResult } from './harness.js';

export const START = '<!-- bench:measured:start (written by npm run bench) -->';
export const END = '<!-- bench:measured:end -->';

const ROWS: Array<{ label: (version?: string) => string; limiter: string }> = [
  { label: () => 'bulk-register (sliding window in Lua)', limiter: 'sliding-window' },
  { label: (v) => `rate-limiter-flexible${v ? ` ${v}` : ''}`, limiter: 'rate-limiter-flexible' },
  { label: (v) => `bottleneck${v ? ` ${v}` : ''}`, limiter: 'bottleneck' },
  { label: () => 'naive GET then INCR', limiter: 'naive' },
  { label: () => 'token bucket', limiter: 'token-bucket' },
  { label: () => "BullMQ's own `limiter` (queue-wide)", limiter: 'bullmq-limiter' },
];

/** The block between the markers: the run's date and one row per limiter. */
export function measuredBlock(scenarios: readonly ScenarioResult[], date: string): string {
  const find = (name: string, limiter: string) => scenarios.find((s) => s.name === name && s.limiter === limiter);
  const cell = (v: number | null | undefined) => (v === null || v === undefined ? '–' : String(v));
  const lines = ROWS.flatMap(({ label, limiter }) => {
    const single = find('single-500', limiter);
    const capacity = find('capacity', limiter);
    if (!single && !capacity) return [];
    const version = capacity?.library?.split('@')[1];
    return [`| ${label(version)} | ${cell(single?.tooMany)} | ${cell(single?.maxInWindow)} | ${cell(single?.spanRatio)} | ${cell(capacity?.throughputRatio)} |`];
  });
  return [
    START,
    `From \`npm run bench\`, run of ${date} on a 2-core machine; every table, the`,
    'setup and the notes are in [bench/RESULTS.md](bench/RESULTS.md). One seller',
    'of 500 rows under a rule of 50 per 2 s, and 200 sellers × 50 rows at once',
    'against an API answering in 150–250 ms:',
    '',
    '| limiter | 429s, 500 rows | most requests in one window (L = 50) | span ÷ optimum | rows/s at capacity ÷ bare BullMQ |',
    '| --- | --- | --- | --- | --- |',
    ...lines,
    END,
  ].join('\n');
}

/** `readme` with the block between the markers replaced; unchanged when the markers are missing. */
export function withMeasured(readme: string, block: string): string {
  const from = readme.indexOf(START);
  const to = readme.indexOf(END);
  if (from === -1 || to < from) return readme;
  return readme.slice(0, from) + block + readme.slice(to + END.length);
}
