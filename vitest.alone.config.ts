import { defineConfig } from 'vitest/config';
import { ALONE, common } from './vitest.config';

/** `npm test`'s second run: the integration files that run alone (ALONE in vitest.config.ts), one at a time. */
export default defineConfig({ test: { ...common, include: ALONE } });
