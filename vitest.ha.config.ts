import { defineConfig } from 'vitest/config';

/**
 * `npm run test:ha`: the failure suite (test/ha/*.ha.test.ts). Real Redis,
 * Sentinel, worker and API processes, faults injected mid-run; minutes per
 * file, so it is kept out of `npm test` and run after it by .ci/run.
 *
 * Two files at a time: a case's pool (4 processes at 200 ms answers) keeps under
 * half a core busy, and the cluster failover file alone takes about as long as
 * the others together (vitest starts the largest file first when it has no timings yet).
 */
export default defineConfig({
  test: {
    include: ['test/ha/**/*.ha.test.ts'],
    testTimeout: 15 * 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 1,
  },
});
