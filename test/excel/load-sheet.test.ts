import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { parseSheetBytes, loadSheet } from '../../src/excel/load-sheet.js';
import { UploadRejected } from '../../src/excel/errors.js';
import { ENGLISH_HEADERS, KOREAN_HEADERS, buildSheet, buildProductSheet, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { FIXTURES_DIR } from '../../src/paths.js';

const ROW = ['A-1', 'Mug', 12000, 30, 'C0101', 'Acme', 'A mug', 'https://img.example.com/1.jpg'];

async function parse(buf: Buffer, name = 'p.xlsx') {
  return parseSheetBytes(buf, name);
}

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(UploadRejected);
    return (err as Error).message;
  }
  throw new Error('expected the file to be rejected');
}

describe('header row', () => {
  it('matches Korean aliases', async () => {
    const s = await parse(await buildSheet(KOREAN_HEADERS, [ROW]));
    expect(s.errors).toEqual([]);
    expect(s.valid[0]!.product).toEqual({ sku: 'A-1', name: 'Mug', price: 12000, stock: 30, category: 'C0101', brand: 'Acme', description: 'A mug', imageUrl: 'https://img.example.com/1.jpg' });
  });

  it('ignores case, surrounding and inner spaces, _ and -', async () => {
    const headers = ['  SKU ', 'Product_Name', 'sale-price', 'QUANTITY', 'Category Code', 'BRAND', 'de scrip tion', 'Image-URL'];
    const s = await parse(await buildSheet(headers, [ROW]));
    expect(s.valid).toHaveLength(1);
    expect(s.valid[0]!.product.imageUrl).toBe('https://img.example.com/1.jpg');
  });

  it('keeps other columns as the row\'s attributes and reads the rest', async () => {
    const s = await parse(await buildSheet([...ENGLISH_HEADERS, 'color'], [[...ROW, 'red']]));
    expect(s.valid).toHaveLength(1);
    expect(s.valid[0]!.attributes).toEqual({ color: 'red' });
    expect(s.extraColumns).toEqual(['color']);
    // the warning depends on the adapter: `upload` adds it (extra-columns.test.ts)
    expect(s.warnings).toEqual([]);
  });

  it('rejects a file missing a required column, naming it', async () => {
    const msg = await rejection(parse(await buildSheet(['sku', 'name', 'stock', 'category'], [['A', 'B', 1, 'C']])));
    expect(msg).toContain('"price"');
  });

  it('rejects a header row with nothing else', async () => {
    expect(await rejection(parse(await buildSheet(ENGLISH_HEADERS, [])))).toContain('no products found');
  });
});

describe('cells as real spreadsheets hold them', () => {
  it('reads rich text as its plain text and trims text', async () => {
    const rich = { richText: [{ text: '  Blue ', font: { bold: true } }, { text: 'Mug  ' }] };
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [['A-1', rich, 100, 1, 'C1']]));
    expect(s.valid[0]!.product.name).toBe('Blue Mug');
  });

  it('reads the cached result of a formula and rejects a formula with none', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [
      ['A-1', 'Mug', { formula: '6000*2', result: 12000 }, 1, 'C1'],
      ['A-2', 'Cup', { formula: '1/0', result: undefined } as unknown as ExcelJS.CellValue, 1, 'C1'],
      ['A-3', 'Pot', { formula: '1/0', result: { error: '#DIV/0!' } } as ExcelJS.CellValue, 1, 'C1'],
    ]));
    expect(s.valid.map((v) => v.product.price)).toEqual([12000]);
    expect(s.errors).toEqual([
      { row: 3, column: 'price', message: expect.stringContaining('a formula with no saved result') },
      { row: 4, column: 'price', message: expect.stringContaining('a formula with no saved result') },
    ]);
  });

  it('reads a hyperlink cell as its displayed text', async () => {
    const link = { text: 'https://img.example.com/a.png', hyperlink: 'https://img.example.com/a.png' };
    const named = { text: 'Mug (see site)', hyperlink: 'https://shop.example.com/mug' };
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [['A-1', named, 100, 1, 'C1', '', '', link]]));
    expect(s.errors).toEqual([]);
    expect(s.valid[0]!.product.name).toBe('Mug (see site)');
    expect(s.valid[0]!.product.imageUrl).toBe('https://img.example.com/a.png');
  });

  it('reads numbers stored as text, and refuses decimals for whole-number fields', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [
      ['A-1', 'Mug', '12000', ' 30 ', 'C1'],
      ['A-2', 'Cup', ' 12,000 ', '1,000', 'C1'],
      ['A-3', 'Pot', '12.5', 2.5, 'C1'],
    ]));
    expect(s.valid.map((v) => [v.product.price, v.product.stock])).toEqual([[12000, 30], [12000, 1000]]);
    expect(s.errors.filter((e) => e.row === 4).map((e) => e.column)).toEqual(['price', 'stock']);
  });

  it('refuses dates in every field', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [['A-1', new Date('2024-01-02'), new Date('2024-01-02'), 1, 'C1']]));
    expect(s.errors.map((e) => e.column)).toEqual(['name', 'price']);
    expect(s.errors[0]!.message).toContain('date');
  });

  it('reads a numeric SKU as its text', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [[880012, 'Mug', 100, 1, 'C1']]));
    expect(s.valid[0]!.product.sku).toBe('880012');
  });
});

describe('rows', () => {
  it('skips blank rows wherever they stand and keeps the sheet row numbers', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [[], ['A-1', 'Mug', 100, 1, 'C1'], [null, '', '  '], [], ['A-2', 'Cup', 'x', 1, 'C1'], []]));
    expect(s.rows).toBe(2);
    expect(s.valid.map((v) => v.row)).toEqual([3]);
    expect(s.errors).toEqual([{ row: 6, column: 'price', message: expect.stringContaining('whole number') }]);
  });

  it('reports every problem of a row, with row and column', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [['', '', 0, 100000, '', 'b'.repeat(51), '', 'not a url']]));
    expect(s.errors.map((e) => e.column).sort()).toEqual(['brand', 'category', 'imageUrl', 'name', 'price', 'sku', 'stock']);
    expect(s.errors.every((e) => e.row === 2)).toBe(true);
  });

  it('makes a later duplicate SKU invalid, naming the first row', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [['A-1', 'Mug', 100, 1, 'C1'], ['A-2', 'Cup', 100, 1, 'C1'], ['A-1', 'Pot', 100, 1, 'C1']]));
    expect(s.valid.map((v) => v.row)).toEqual([2, 3]);
    expect(s.errors).toEqual([{ row: 4, column: 'sku', message: 'duplicate sku, first seen in row 2' }]);
  });

  it('leaves optional fields out when empty', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [['A-1', 'Mug', 100, 0, 'C1', '', '   ', null]]));
    expect(s.valid[0]!.product).toEqual({ sku: 'A-1', name: 'Mug', price: 100, stock: 0, category: 'C1' });
  });

  it('accepts 500 product rows, not counting blank ones', async () => {
    const rows = productRows(sampleProducts('A', 500));
    rows.splice(100, 0, [], []);
    const s = await parse(await buildSheet(ENGLISH_HEADERS, rows));
    expect(s.valid).toHaveLength(500);
  });

  it('rejects 501 product rows with the count', async () => {
    const msg = await rejection(parse(await buildProductSheet(sampleProducts('A', 501))));
    expect(msg).toContain('the file has 501 product rows; at most 500 are allowed');
  });

  it('stops reading a huge sheet early', async () => {
    const buf = await buildProductSheet(sampleProducts('A', 20_000));
    const started = process.hrtime.bigint();
    const msg = await rejection(parse(buf));
    const small = await buildProductSheet(sampleProducts('A', 1_100));
    const t2 = process.hrtime.bigint();
    await rejection(parse(small));
    const smallMs = Number(process.hrtime.bigint() - t2) / 1e6;
    const hugeMs = Number(t2 - started) / 1e6;
    expect(msg).toContain('more than 1,000 product rows');
    // Reading 20,000 rows to the end would take many times the 1,100-row read.
    expect(hugeMs).toBeLessThan(smallMs * 5 + 500);
  });
});

describe('which sheet', () => {
  it('reads the sheet named products or 상품 (any case), else the first visible one', async () => {
    const other = (wb: ExcelJS.Workbook) => {
      const ws = wb.addWorksheet('Instructions');
      ws.addRow(['read me']);
    };
    const named = await buildSheet(ENGLISH_HEADERS, [ROW], { sheetName: '상품', before: other });
    expect((await parse(named)).valid).toHaveLength(1);
    const upper = await buildSheet(ENGLISH_HEADERS, [ROW], { sheetName: 'PRODUCTS', before: other });
    expect((await parse(upper)).valid).toHaveLength(1);

    const hiddenFirst = await buildSheet(ENGLISH_HEADERS, [ROW], {
      sheetName: 'Data',
      before: (wb) => {
        const ws = wb.addWorksheet('Old');
        ws.state = 'hidden';
        ws.addRow(['nothing', 'here']);
      },
    });
    expect((await parse(hiddenFirst)).valid).toHaveLength(1);
  });
});

describe('files that cannot be used', () => {
  it('rejects CSV text in an .xlsx file, saying what it looks like', async () => {
    expect(await rejection(parse(Buffer.from('sku,name\nA,B\n'), 'p.xlsx'))).toBe('this .xlsx file holds CSV text: save it as .xlsx or rename it .csv.');
  });

  it('rejects legacy .xls and password-protected workbooks', async () => {
    const ole = Buffer.alloc(2048);
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole);
    expect(await rejection(parse(ole, 'p.xls'))).toContain('legacy .xls is not supported: save the file as .xlsx');
    const encrypted = Buffer.concat([ole, Buffer.from('EncryptionInfo', 'utf16le')]);
    expect(await rejection(parse(encrypted, 'p.xlsx'))).toContain('password-protected');
  });

  it('rejects a zip that is not a workbook, a truncated workbook, random bytes and an empty file', async () => {
    const good = await buildProductSheet(sampleProducts('A', 50));
    expect(await rejection(parse(good.subarray(0, Math.floor(good.length / 2))))).toContain('damaged or incomplete');
    const zipOnly = Buffer.from('504b0304140000000800', 'hex');
    const emptyDirectory = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');
    expect(await rejection(parse(Buffer.concat([zipOnly, Buffer.alloc(100), emptyDirectory])))).toContain('zip archive but not an .xlsx workbook');
    const noise = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 256));
    expect(await rejection(parse(noise))).toContain('not an .xlsx workbook');
    expect(await rejection(parse(Buffer.alloc(0)))).toContain('empty');
  });

  it('refuses a file over 10 MiB before reading it', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync(join((await import('node:os')).tmpdir(), 'br-'));
    const path = join(dir, 'big.xlsx');
    writeFileSync(path, Buffer.alloc(10 * 1024 * 1024 + 1));
    expect(await rejection(loadSheet(path))).toContain('at most 10 MiB');
    expect(await rejection(loadSheet(join(dir, 'missing.xlsx')))).toContain('does not exist');
  });
});

describe('committed fixtures', () => {
  it('parse as their names say', async () => {
    expect((await loadSheet(join(FIXTURES_DIR, 'seller-a-150.xlsx'))).valid).toHaveLength(150);
    expect((await loadSheet(join(FIXTURES_DIR, 'seller-b-60-korean.xlsx'))).valid).toHaveLength(60);
    const withErrors = await loadSheet(join(FIXTURES_DIR, 'with-errors.xlsx'));
    expect(withErrors.valid).toHaveLength(6);
    expect(withErrors.errors.map((e) => [e.row, e.column])).toEqual([[4, 'price'], [6, 'sku'], [8, 'name'], [9, 'imageUrl']]);
    expect(readFileSync(join(FIXTURES_DIR, 'seller-c-7.xlsx')).subarray(0, 2).toString()).toBe('PK');
  });
});
