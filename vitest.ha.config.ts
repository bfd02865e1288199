import { defineConfig } from 'vitest/config';

/**
 * `npm run test:ha`: the failure suite (test/ha/*.ha.test.ts). Real Redis,
 * Sentinel, worker and API processes, faults injected mid-run; minutes per
 * file, so it is kept out of `npm test` and run after it by .ci/run.
 */
export default defineConfig({
  test: {
    include: ['test/ha/**/*.ha.test.ts'],
    testTimeout: 15 * 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
