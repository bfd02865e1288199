import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { PAIRED, common } from './vitest.config';

/**
 * `npm test`'s third run: the integration files that wait more than they work (PAIRED in
 * vitest.config.ts), two at a time among themselves, started in PAIRED's order (longest
 * first) so that the two lines end together. Without an order vitest starts the largest
 * files first, by their size when it has no timings (a fresh clone).
 */
class PairedOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => PAIRED.findIndex((p) => f.moduleId.endsWith(p));
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    ...common,
    include: PAIRED,
    fileParallelism: true,
    maxWorkers: 2,
    minWorkers: 2,
    sequence: { sequencer: PairedOrder },
  },
});
