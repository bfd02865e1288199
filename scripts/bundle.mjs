#!/usr/bin/env node
// The second half of `npm run build`: the command line and the pool's worker process,
// each bundled with what they import into dist/bundle/ (esbuild), from tsc's output in
// dist/src/. A command then reads a few files at start instead of about 900 (bullmq,
// zod, exceljs's reader and their trees, each resolved, stat'ed and compiled on its
// own): `upload` of a 60-row sheet took 0.61 s of CPU instead of 0.99 s on Node 20
// (docs/operations.md, "How long a command takes to start"). Code shared by the two
// entries, and each command's own (loaded when it runs), sits in chunks of its own.
import { build } from 'esbuild';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const outdir = join(root, 'dist', 'bundle');
rmSync(outdir, { recursive: true, force: true });
const common = {
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // the CommonJS packages bundled in (ioredis, exceljs, ...) require Node's own modules
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  // Without comments and whitespace, names kept (stack traces still name the functions). Every
  // process holds the source of what it loaded: the libraries' comments and indentation are most
  // of it, and a chunk with one character beyond Latin-1 (an arrow or a dash in a comment) is
  // held as a two-byte string, twice its size. At the bench's capacity, a worker process held
  // 55-56 MB anonymous with them, 49-50 MB unbundled and 45 MB without them (docs/operations.md).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  logLevel: 'warning',
};
await build({
  ...common,
  entryPoints: [join(root, 'dist/src/cli/index.js'), join(root, 'dist/src/worker/worker-main.js')],
  // dist/bundle/index.js, and worker-main.js beside it, where the supervisor forks it
  // from (src/worker/supervisor.ts: WORKER_ENTRY, next to its own module)
  outdir,
});

// The bench's pool process (bench/bench-worker.ts: the product's worker with the limiter the
// bench names), bundled as the product's is, so that the bench measures what a pool runs (its
// memory above all). A build without bench/ has nothing to bundle here.
const benchWorker = join(root, 'dist/bench/bench-worker.js');
const benchOutdir = join(root, 'dist', 'bench', 'bundle');
rmSync(benchOutdir, { recursive: true, force: true });
if (existsSync(benchWorker)) await build({ ...common, entryPoints: [benchWorker], outdir: benchOutdir });
