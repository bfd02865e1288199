#!/usr/bin/env node
// Entry point for `npx bulk-register`: runs the compiled CLI (built by `npm ci` through the prepare script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/index.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('bulk-register is not built yet: run `npm ci` (or `npm run build`) in the checkout first.\n');
  process.exit(1);
}
await import(entry.href);
