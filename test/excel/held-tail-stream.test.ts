/**
 * The workbook stream that holds back the zip's central directory until the
 * reader has taken every entry. The fault it prevents: the unzipper under
 * exceljs ends its stream of entries when it has parsed the zip's end, while
 * entries it pushed still wait for a reader that is busy (spooling a worksheet
 * to a temporary file, say). Here the reader is exceljs's own loop over the
 * unzipper, made busy on purpose, so the fault shows: on an idle host at every
 * read, on a loaded one (a CI run) not always, so it is looked for over a few.
 */
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { HeldTailStream } from '../../src/excel/held-tail-stream.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { centralDirectoryOffset, readZipDirectory } from '../../src/excel/zip-directory.js';
import { ENGLISH_HEADERS, buildSheet } from '../../src/fixtures/build-sheet.js';

// the unzipper and the loop exceljs itself uses, resolved from exceljs's own place
const fromExceljs = createRequire(createRequire(import.meta.url).resolve('exceljs'));
const unzipper = fromExceljs('unzipper') as { Parse(opts: { forceStream: boolean }): NodeJS.ReadWriteStream };
const iterateStream = fromExceljs('./lib/utils/iterate-stream.js') as (s: NodeJS.ReadableStream) => AsyncIterable<{ path: string; autodrain(): void }>;

const ROW = ['A-1', 'Cotton shirt', 100, 1, 'Clothing'];

async function twoSheets(): Promise<Buffer> {
  return buildSheet(ENGLISH_HEADERS, [ROW], {
    sheetName: 'PRODUCTS',
    before: (wb: ExcelJS.Workbook) => wb.addWorksheet('Instructions').addRow(['read me']),
  });
}

/** The entries a busy reader gets: it spends `busyMs` on each, as exceljs does spooling a sheet. */
async function entriesRead(input: Readable, busyMs: number): Promise<string[]> {
  const zip = unzipper.Parse({ forceStream: true });
  input.pipe(zip);
  const names: string[] = [];
  for await (const entry of iterateStream(zip)) {
    names.push(entry.path);
    await sleep(busyMs);
    entry.autodrain();
  }
  return names;
}

describe('a workbook stream for a busy reader', () => {
  it('loses no entry, where the whole file at once loses the last ones', async () => {
    const bytes = await twoSheets();
    const directory = readZipDirectory(bytes)!.map((e) => e.name);
    expect(directory.at(-1)).toBe('xl/workbook.xml');

    // the fault, as the unzipper has it: it ends while entries still wait (once, in a CI run,
    // a read at once got every entry: the fault depends on timing)
    let lost: string[] | undefined;
    for (const busyMs of [5, 10, 20, 5, 10, 20]) {
      const atOnce = await entriesRead(Readable.from([bytes]), busyMs);
      if (atOnce.length < directory.length) {
        lost = atOnce;
        break;
      }
    }
    expect(lost, 'the whole file at once lost no entry in 6 reads').toBeDefined();
    expect(lost).not.toContain('xl/workbook.xml');

    // held back, every read gets every entry
    for (const busyMs of [5, 10, 20]) {
      const held = await entriesRead(new HeldTailStream(bytes, centralDirectoryOffset(bytes), directory.length), busyMs);
      expect(held).toEqual(directory);
    }
  });

  it('sends a damaged zip on, so the unzipper reports it, when its entries and directory disagree', async () => {
    const bytes = await twoSheets();
    const count = readZipDirectory(bytes)!.length;
    // the directory claims more entries than the file holds: the stream must not wait for them forever
    const names = await entriesRead(new HeldTailStream(bytes, centralDirectoryOffset(bytes), count + 5), 1);
    expect(names).toHaveLength(count);
  });

  it('is what the sheet reader reads: a workbook whose last part is xl/workbook.xml is read whole, read after read', async () => {
    const bytes = await twoSheets();
    for (let i = 0; i < 100; i++) {
      const sheet = await parseSheetBytes(bytes, 'p.xlsx');
      expect(sheet.valid.map((r) => r.product.sku)).toEqual(['A-1']);
    }
  });
});
