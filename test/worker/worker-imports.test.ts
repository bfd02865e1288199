/**
 * What a pool worker process loads: the static imports reachable from its entry
 * point (src/worker/worker-main.ts), type-only imports left out. The pool hands
 * a worker its settings already checked (worker-config.ts), so the schema's
 * library has no business there; nor has the sheet reader (exceljs; a worker
 * borrows only small helpers from src/excel/). Each costs every one
 * of the 16 processes its memory.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';

/** The modules `file` imports statically at run time: relative ones as paths, packages by name. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(?!type\s)(?:[^;'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) found.push(m[1]!);
  return found;
}

function reachable(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('a worker process', () => {
  it('loads neither the settings schema nor the sheet reader', () => {
    const { files, packages } = reachable(join(PACKAGE_ROOT, 'src/worker/worker-main.ts'));
    const rel = [...files].map((f) => f.slice(PACKAGE_ROOT.length + 1));
    expect(rel).toContain('src/worker/worker-process.ts');
    expect(rel).toContain('src/redis.ts');
    expect(packages).toContain('bullmq');
    expect(rel).not.toContain('src/config.ts');
    expect([...packages]).not.toContain('zod');
    expect([...packages]).not.toContain('exceljs');
    expect(rel).not.toContain('src/excel/read-workbook.ts');
  });
});
