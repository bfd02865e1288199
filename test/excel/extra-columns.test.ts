/**
 * The marketplace's own columns (excel-format.md "Header row"): kept by their
 * header as written, handed on as `attributes`, and named once in a warning
 * when the built-in adapter would drop them.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { REASON_HEADER } from '../../src/excel/fields.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { columnLetter, extraColumnsWarning, unheadedWarning } from '../../src/excel/parse-products.js';
import { buildSheet, ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { submitUpload } from '../../src/upload/submit-upload.js';
import { baseEnv, runCli } from '../helpers/cli.js';
import { rejection } from '../helpers/rejection.js';

// our fields in Korean, with the marketplace's columns between and after them
const HEADERS = ['판매자상품코드', 'origin', '상품명', '판매가', '재고수량', '카테고리코드', '  shipping Fee ', 'certi\u0007fications'];

describe('extra columns', () => {
  it('are kept by their header as written, in sheet order, and become each valid row\'s attributes (empty cells left out)', async () => {
    const s = await parseSheetBytes(await buildSheet(HEADERS, [
      ['K-1', ' Korea ', 'Mug', 12000, 3, 'C1', 3000, ' KC mark\n'],
      ['K-2', '', 'Cup', 9000, 1, 'C1', null, '   '],
      ['K-3', 'Japan', 'Pot', 'not a price', 1, 'C1', 0, true],
    ]), 'extra.xlsx');
    expect(s.warnings).toEqual([]);
    expect(s.extraColumns).toEqual(['origin', 'shipping Fee', 'certifications']);
    expect(s.columns).toEqual([
      { header: '판매자상품코드', field: 'sku' },
      { header: 'origin' },
      { header: '상품명', field: 'name' },
      { header: '판매가', field: 'price' },
      { header: '재고수량', field: 'stock' },
      { header: '카테고리코드', field: 'category' },
      { header: 'shipping Fee' },
      { header: 'certifications' },
    ]);
    expect(s.valid).toEqual([
      { row: 2, product: { sku: 'K-1', name: 'Mug', price: 12000, stock: 3, category: 'C1' }, attributes: { origin: 'Korea', 'shipping Fee': '3000', certifications: 'KC mark' } },
      { row: 3, product: { sku: 'K-2', name: 'Cup', price: 9000, stock: 1, category: 'C1' }, attributes: {} },
    ]);
    // the reports keep every row's extra cells, the invalid row's too
    expect(s.raw.map((r) => r.extra)).toEqual([
      { origin: ' Korea ', 'shipping Fee': '3000', certifications: ' KC mark\n' },
      {},
      { origin: 'Japan', 'shipping Fee': '0', certifications: 'TRUE' },
    ]);
    expect(s.errors.map((e) => [e.row, e.column])).toEqual([[4, 'price']]);
  });

  it('strips control characters from headers and cells (a CSV keeps them, unlike exceljs)', async () => {
    const csv = Buffer.from('sku,name,price,stock,category,"ori\u001bgin"\nC-1,Mug,100,1,C1," K\u0007R\u001b[0m "\n');
    const s = await parseSheetBytes(csv, 'x.csv');
    expect(s.extraColumns).toEqual(['origin']);
    expect(s.valid[0]!.attributes).toEqual({ origin: 'KR[0m' });
  });

  it('makes a date or a formula error in an extra column a row error, named by its header', async () => {
    const s = await parseSheetBytes(await buildSheet([...ENGLISH_HEADERS, 'expires'], [
      ['D-1', 'Mug', 100, 1, 'C1', '', '', '', new Date('2030-01-01')],
      ['D-2', 'Cup', 100, 1, 'C1', '', '', '', { formula: '1/0', result: { error: '#DIV/0!' } } as never],
      ['D-3', 'Pot', 100, 1, 'C1', '', '', '', '2030-01-01'],
    ]), 'dates.xlsx');
    expect(s.errors).toEqual([
      { row: 2, column: 'expires', message: '"expires" holds a date; dates are not valid values, type the text instead' },
      { row: 3, column: 'expires', message: expect.stringContaining('"expires" holds a formula') },
    ]);
    expect(s.valid).toEqual([{ row: 4, product: expect.objectContaining({ sku: 'D-3' }), attributes: { expires: '2030-01-01' } }]);
  });

  it('reject the file when two columns have the same header (ignoring case and surrounding spaces), naming it', async () => {
    const twice = await rejection(parseSheetBytes(await buildSheet([...ENGLISH_HEADERS, 'Origin', 'color', ' origin '], [['A', 'B', 1, 1, 'C']]), 'x.xlsx'));
    expect(twice).toBe('the sheet has two columns headed "origin" (columns I and K): remove one or give it another header, and upload again.');
    // the same field's header written twice alike is the same header too
    const sameField = await rejection(parseSheetBytes(await buildSheet([...ENGLISH_HEADERS, 'SKU'], [['A', 'B', 1, 1, 'C']]), 'x.xlsx'));
    expect(sameField).toContain('the sheet has two columns headed "SKU" (columns A and I)');
  });

  it('keep the old rule for two different aliases of one field: the first is read, with a warning', async () => {
    const s = await parseSheetBytes(await buildSheet([...ENGLISH_HEADERS, '판매자상품코드'], [['A-1', 'Mug', 100, 1, 'C1', '', '', '', 'OTHER']]), 'x.xlsx');
    expect(s.valid).toEqual([{ row: 2, product: expect.objectContaining({ sku: 'A-1' }), attributes: {} }]);
    expect(s.extraColumns).toEqual([]);
    expect(s.warnings).toEqual(['column "판매자상품코드" repeats the sku column; only the first one is read.']);
  });

  it("skip the failed-only file's reason column, so that the file goes back as it is", async () => {
    const s = await parseSheetBytes(await buildSheet([...ENGLISH_HEADERS, 'origin', REASON_HEADER], [['A-1', 'Mug', 100, 1, 'C1', '', '', '', 'KR', 'category C9 does not exist']]), 'x.xlsx');
    expect(s.extraColumns).toEqual(['origin']);
    expect(s.valid[0]!.attributes).toEqual({ origin: 'KR' });
    expect(s.warnings).toEqual([]);
  });

  it('say so when a column with no header holds values, which are not read', async () => {
    const rows = [
      ['A-1', 'Mug', 100, 1, 'C1', '', '', '', 'KR', '', 'gift'],
      ['A-2', 'Cup', 100, 1, 'C1', '', '', '', 'KR', '', ''],
      ...['A-3', 'A-4', 'A-5', 'A-6'].map((sku) => [sku, 'Pot', 100, 1, 'C1', '', '', '', '', '', 'gift']),
    ];
    const s = await parseSheetBytes(await buildSheet([...ENGLISH_HEADERS, 'origin', '', ''], rows), 'x.xlsx');
    expect(s.valid).toHaveLength(6);
    expect(s.extraColumns).toEqual(['origin']);
    expect(s.warnings).toEqual([unheadedWarning(10, [2, 4, 5, 6, 7])]);
    expect(s.warnings[0]).toBe('column K has no header in row 1, so its values (rows 2, 4, 5 and 2 more) were not read: give it a header to send them to the marketplace, or clear it.');
    // a value past the last header is in a column with no header too
    const past = await parseSheetBytes(await buildSheet(ENGLISH_HEADERS, [['A-1', 'Mug', 100, 1, 'C1', '', '', '', 'note']]), 'x.xlsx');
    expect(past.warnings).toEqual(['column I has no header in row 1, so its values (row 2) were not read: give it a header to send them to the marketplace, or clear it.']);
  });

  it('name spreadsheet columns as the spreadsheet does', () => {
    expect([0, 8, 25, 26, 27, 51, 52, 701, 702].map(columnLetter)).toEqual(['A', 'I', 'Z', 'AA', 'AB', 'AZ', 'BA', 'ZZ', 'AAA']);
  });
});

describe('the warning about extra columns', () => {
  it('names every extra column once, only for the built-in adapter', () => {
    expect(extraColumnsWarning(['origin', 'shippingFee'], true)).toBe(
      'columns "origin", "shippingFee" are kept in the reports but not sent: the built-in adapter sends only the fields of the template (sku, name, price, stock, category, brand, description, imageUrl); set REGISTRATION_ADAPTER to send them.',
    );
    expect(extraColumnsWarning(['origin'], true)).toMatch(/^column "origin" is kept in the reports but not sent: .*; set REGISTRATION_ADAPTER to send it\.$/);
    expect(extraColumnsWarning(['origin'], false)).toBeUndefined();
    expect(extraColumnsWarning([], true)).toBeUndefined();
    const many = extraColumnsWarning(Array.from({ length: 25 }, (_, i) => `c${i}`), true)!;
    expect(many).toContain('"c19" and 5 more are kept');
    expect(many).not.toContain('"c20"');
  });

  it('is added to the summary of a check (the one path of `upload` and the console) when REGISTRATION_ADAPTER is unset', async () => {
    const sheet = await parseSheetBytes(await buildSheet([...ENGLISH_HEADERS, 'origin'], [['A-1', 'Mug', 100, 1, 'C1', '', '', '', 'KR']]), 'x.xlsx');
    const builtin = await submitUpload(undefined, 'S1', sheet, { dryRun: true, config: loadConfig({}) });
    expect(builtin.warnings).toEqual([extraColumnsWarning(['origin'], true)]);
    const adapter = await submitUpload(undefined, 'S1', sheet, { dryRun: true, config: loadConfig({ REGISTRATION_ADAPTER: './my-market.mjs' }) });
    expect(adapter.warnings).toEqual([]);
  });

  it('is printed once by `upload`, in its JSON and in its plain summary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'br-extra-'));
    const path = join(dir, 'extra.xlsx');
    writeFileSync(path, await buildSheet([...ENGLISH_HEADERS, 'origin', 'shippingFee'], [['A-1', 'Mug', 100, 1, 'C1', '', '', '', 'KR', 2500]]));
    const json = await runCli(['upload', path, '--seller', 'S1', '--dry-run', '--json'], baseEnv({}));
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).warnings).toEqual([extraColumnsWarning(['origin', 'shippingFee'], true)]);
    const plain = await runCli(['upload', path, '--seller', 'S1', '--dry-run'], baseEnv({}));
    expect(plain.stdout.match(/warning: /g)).toHaveLength(1);
    expect(plain.stdout).toContain('warning: columns "origin", "shippingFee" are kept in the reports but not sent');
  });
});
