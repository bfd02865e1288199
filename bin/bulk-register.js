#!/usr/bin/env node
// Entry point for `npx bulk-register`: runs the compiled CLI (built by `npm ci` through the prepare script).
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// Node 22.1 and later keep the compiled code of the modules on disk between runs (in the OS's
// temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a command starts sooner.
// Earlier versions have no such call.
module.enableCompileCache?.();

// the command line bundled with what it imports (scripts/bundle.mjs, part of the build)
const entry = new URL('../dist/bundle/index.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('bulk-register is not built yet: run `npm ci` (or `npm run build`) in the checkout first.\n');
  process.exit(1);
}
await import(entry.href);
