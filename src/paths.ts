/** Locations inside the installed package, the same from src/ (tests) and dist/src/ (built). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'lua'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('bulk-register: cannot find the package root (package.json beside lua/)');
    dir = up;
  }
  return dir;
}

export const PACKAGE_ROOT = findRoot();
export const LUA_DIR = join(PACKAGE_ROOT, 'lua');
export const CLI_ENTRY = join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'index.js');
export const FIXTURES_DIR = join(PACKAGE_ROOT, 'fixtures');
