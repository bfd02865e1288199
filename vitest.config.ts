import { existsSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Integration files (*.int.test.ts) that run alone, one at a time: they time what
 * the product does (a pause or a cancel within 200 ms, spans, retries, Redis
 * restarts and freezes), run a pool of worker processes at work, or drive Chromium
 * through a live run, and a second file beside them on this 2-core machine would
 * move their timings. The rest, and the unit files, run two at a time:
 * `npm test` runs `vitest.shared.config.ts`, then this config with only these files.
 */
export const ALONE = [
  'test/console/browser.int.test.ts',
  'test/console/live-outage.browser.int.test.ts',
  'test/console/redis-away.int.test.ts',
  'test/faults/faults.int.test.ts',
  'test/faults/sentinel-switch.int.test.ts',
  'test/faults/throttle-faults.int.test.ts',
  'test/marketplace/first-window.int.test.ts',
  'test/marketplace/pool.int.test.ts',
  'test/pipeline.int.test.ts',
  'test/rate-limit/race.int.test.ts',
  'test/rate-limit/sliding-window.int.test.ts',
  'test/steering/cancel-unanswered.int.test.ts',
  'test/steering/cancel.int.test.ts',
  'test/steering/last-row-failing.int.test.ts',
  'test/steering/outage-attempts.int.test.ts',
  'test/steering/outage.int.test.ts',
  'test/steering/pause-share.int.test.ts',
  'test/steering/pause.int.test.ts',
  'test/steering/resume-window.int.test.ts',
  'test/steering/steer-relay.int.test.ts',
  'test/steering/webhooks.int.test.ts',
  'test/upload/fair-share.int.test.ts',
  'test/worker/adaptive-concurrency.int.test.ts',
  'test/worker/count-order.int.test.ts',
  'test/worker/staggered-start.int.test.ts',
];

// a file renamed or gone would otherwise drop out of the list unnoticed, and run two at a time
for (const file of ALONE) {
  if (!existsSync(new URL(file, import.meta.url))) throw new Error(`vitest.config.ts: ALONE names ${file}, which does not exist`);
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
