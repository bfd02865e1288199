/** Where `template` and `report` write: an .xlsx name, and a sentence that says what is wrong with the path. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/exit.js';
import { writeOut } from '../../src/cli/template.js';

const dir = mkdtempSync(join(tmpdir(), 'br-write-out-'));
const bytes = Buffer.from('PK');

describe('writeOut', () => {
  it('refuses a name that says another format, and writes an .xlsx (or a bare) name', async () => {
    for (const name of ['r.csv', 'r.xls', 'r.json']) await expect(writeOut(join(dir, name), bytes)).rejects.toBeInstanceOf(UsageError);
    await writeOut(join(dir, 'r.XLSX'), bytes);
    await writeOut(join(dir, 'report'), bytes);
    expect(readFileSync(join(dir, 'report'), 'utf8')).toBe('PK');
  });

  it('refuses to write over a file when told not to (the template), and writes over it otherwise (a report)', async () => {
    const path = join(dir, 'products.xlsx');
    await writeOut(path, Buffer.from('filled in'));
    await expect(writeOut(path, bytes, { overwrite: false })).rejects.toThrow(
      `cannot write ${path}: it exists already (it may be a filled-in sheet): give another name, or --force to write over it.`,
    );
    expect(readFileSync(path, 'utf8')).toBe('filled in');
    await writeOut(path, bytes);
    expect(readFileSync(path, 'utf8')).toBe('PK');
  });

  it('says a folder is a folder and a missing folder is missing, naming the path as given', async () => {
    await expect(writeOut(dir, bytes)).rejects.toThrow(`cannot write ${dir}: it is a folder: give a file name ending in .xlsx.`);
    await expect(writeOut(join(dir, 'no', 'r.xlsx'), bytes)).rejects.toThrow(/its folder does not exist/);
  });
});
