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

  it('says a folder is a folder and a missing folder is missing, naming the path as given', async () => {
    await expect(writeOut(dir, bytes)).rejects.toThrow(`cannot write ${dir}: it is a folder: give a file name ending in .xlsx.`);
    await expect(writeOut(join(dir, 'no', 'r.xlsx'), bytes)).rejects.toThrow(/its folder does not exist/);
  });
});
