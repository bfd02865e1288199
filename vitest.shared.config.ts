import { defineConfig } from 'vitest/config';
import { ALONE, PAIRED, common } from './vitest.config';

/**
 * `npm test`'s first run: the unit files and the integration files that neither
 * time the product nor run a pool at work (see ALONE and PAIRED in vitest.config.ts), two
 * files at a time. Each integration file starts its own redis-server on a free port.
 */
export default defineConfig({
  test: {
    ...common,
    include: ['test/**/*.test.ts'],
    exclude: [...common.exclude, ...ALONE, ...PAIRED],
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 1,
  },
});
