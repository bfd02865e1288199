import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // the failure suite runs on its own: `npm run test:ha` (vitest.ha.config.ts)
    exclude: [...configDefaults.exclude, 'test/ha/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Integration files each start their own redis-server and processes: keep the
    // 2-core machine from running several of them at once. `npm test` runs the unit
    // files first, two at a time (--fileParallelism --maxWorkers=2), then these.
    fileParallelism: false,
  },
});
