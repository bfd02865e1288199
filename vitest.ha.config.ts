import { defineConfig } from 'vitest/config';
import { inOrder } from './vitest.config';

/**
 * `npm run test:ha`: the failure suite (test/ha/*.ha.test.ts). Real Redis,
 * Sentinel, worker and API processes, faults injected mid-run; minutes per
 * file, so it is kept out of `npm test` and run after it by .ci/run.
 *
 * Two files at a time: a case's pool (4 processes at 200 ms answers) keeps under
 * half a core busy. Each file holds one case of 3 runs, 1-2.5 minutes, started
 * in the order below, so that the two lines of files end together (the two
 * Cluster failover cases were one file of 4.5 minutes, which set the suite's
 * length) and the Cluster cases, six redis-server processes each, seldom
 * overlap. Without an order vitest starts the largest files first, by their
 * size when it has no timings (a fresh clone): the Cluster cases' two small
 * files then ran last, side by side.
 */
const ORDER = [
  'cluster-seller-master', 'lossy-failover', 'cluster-pin-master', 'sentinel-failover',
  'cluster-freeze', 'sentinel-freeze', 'freeze', 'aof-restart',
];

export default defineConfig({
  test: {
    include: ['test/ha/**/*.ha.test.ts'],
    testTimeout: 15 * 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 2,
    sequence: { sequencer: inOrder(ORDER.map((name) => `${name}.ha.test.ts`)) },
  },
});
