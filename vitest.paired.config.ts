import { defineConfig } from 'vitest/config';
import { PAIRED, common, inOrder } from './vitest.config';

/**
 * `npm test`'s third run: the integration files that wait more than they work (PAIRED in
 * vitest.config.ts), two at a time among themselves, started in PAIRED's order (longest
 * first) so that the two lines end together.
 */
export default defineConfig({
  test: {
    ...common,
    include: PAIRED,
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 2,
    sequence: { sequencer: inOrder(PAIRED) },
  },
});
