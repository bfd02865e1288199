import { existsSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Integration files (*.int.test.ts) that run alone, one at a time: they time what
 * the product does (a pause or a cancel within 200 ms, spans, retries, Redis
 * restarts and freezes), run a pool of worker processes at work, or drive Chromium
 * through a live run, and a second file beside them on this 2-core machine would
 * move their timings. The rest, and the unit files, run two at a time:
 * `npm test` runs `vitest.shared.config.ts`, then `vitest.alone.config.ts` with only
 * these files, then `vitest.paired.config.ts` with PAIRED (below).
 */
export const ALONE = [
  'test/console/browser.int.test.ts',
  'test/console/live-outage.browser.int.test.ts',
  'test/console/redis-away.int.test.ts',
  'test/faults/faults.int.test.ts',
  'test/faults/sentinel-switch.int.test.ts',
  'test/faults/throttle-faults.int.test.ts',
  'test/marketplace/first-window.int.test.ts',
  'test/pipeline.int.test.ts',
  'test/rate-limit/race.int.test.ts',
  'test/rate-limit/sliding-window.int.test.ts',
  'test/steering/cancel-unanswered.int.test.ts',
  'test/steering/cancel.int.test.ts',
  'test/steering/pause-share.int.test.ts',
  'test/steering/pause.int.test.ts',
  'test/steering/resume-window.int.test.ts',
  'test/steering/steer-relay.int.test.ts',
  'test/upload/fair-share.int.test.ts',
  'test/worker/adaptive-concurrency.int.test.ts',
  'test/worker/count-order.int.test.ts',
  'test/worker/staggered-start.int.test.ts',
];

/**
 * Integration files that run a pool at work but spend their time waiting, with under
 * half a core busy: for backoffs between a row's attempts, an outage's length, a
 * webhook receiver's retries, a slow marketplace rule. Their timings are loose (a
 * probe every 2 s, a first registration within 5 s of the API's return), so they run
 * two at a time, among themselves: `npm test`'s third run (vitest.paired.config.ts),
 * in this order, longest first. One at a time they took 300 s of a CI run.
 */
export const PAIRED = [
  'test/marketplace/pool.int.test.ts',
  'test/steering/last-row-failing.int.test.ts',
  'test/steering/outage-attempts.int.test.ts',
  'test/steering/outage.int.test.ts',
  'test/steering/webhooks.int.test.ts',
];

// a file renamed or gone would otherwise drop out of the list unnoticed, and run two at a time
for (const file of [...ALONE, ...PAIRED]) {
  if (!existsSync(new URL(file, import.meta.url))) throw new Error(`vitest.config.ts names ${file}, which does not exist`);
}

/**
 * A sequencer that starts files in `order` (each a path's tail, e.g. 'test/x.test.ts'),
 * the rest after them. Without one vitest starts the largest files first, by their size
 * when it has no timings (a fresh clone).
 */
export function inOrder(order: readonly string[]): typeof BaseSequencer {
  const rank = (file: string) => {
    const i = order.findIndex((tail) => file.endsWith(`/${tail}`));
    return i < 0 ? order.length : i;
  };
  return class extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      return [...files].sort((a, b) => rank(a.moduleId) - rank(b.moduleId));
    }
  };
}

/** What every run of the (non-failure-suite) tests shares. */
export const common = {
  // the failure suite runs on its own: `npm run test:ha` (vitest.ha.config.ts)
  exclude: [...configDefaults.exclude, 'test/ha/**'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  // one file at a time: `npx vitest run <file>` while working, and the ALONE files in `npm test`
  fileParallelism: false,
};

export default defineConfig({ test: { ...common, include: ['test/**/*.test.ts'] } });
