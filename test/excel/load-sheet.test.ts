import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { parseSheetBytes, loadSheet } from '../../src/excel/load-sheet.js';
import { ENGLISH_HEADERS, KOREAN_HEADERS, buildSheet, buildProductSheet, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { rejection } from '../helpers/rejection.js';
import { replaceCells, rewriteZip, writeZip } from '../helpers/zip-writer.js';
import { entryData, readZipDirectory } from '../../src/excel/zip-directory.js';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

const ROW = ['A-1', 'Mug', 12000, 30, 'C0101', 'Acme', 'A mug', 'https://img.example.com/1.jpg'];

async function parse(buf: Buffer, name = 'p.xlsx') {
  return parseSheetBytes(buf, name);
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

  it('reads a header as it looks: zero-width characters ignored, full-width letters as their plain forms', async () => {
    const headers = ['sku\u200b', 'name', 'ｐｒｉｃｅ', '\ufeffstock\u2060', 'category', 'brand', 'description', 'imageUrl'];
    const s = await parse(await buildSheet(headers, [ROW]));
    expect(s.errors).toEqual([]);
    expect(s.valid[0]!.product).toMatchObject({ sku: 'A-1', price: 12000, stock: 30 });
    expect(s.extraColumns).toEqual([]);
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
      { row: 4, column: 'price', message: expect.stringContaining('a formula whose result is an error') },
    ]);
  });

  it('reads a formula that saved TRUE or FALSE as that, not as 1 or 0, as a typed TRUE is', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [
      ['A-1', 'Mug', 100, { formula: 'C2>0', result: true } as ExcelJS.CellValue, 'C1'],
      ['A-2', 'Cup', { formula: 'C2<0', result: false } as ExcelJS.CellValue, 1, 'C1'],
      ['A-3', 'Pot', 100, { sharedFormula: 'D2', result: true } as ExcelJS.CellValue, 'C1'],
      ['A-4', 'Pan', 100, true, 'C1'],
      ['A-5', 'Lid', 100, { formula: '2-1', result: 1 } as ExcelJS.CellValue, 'C1'],
    ]));
    expect(s.errors).toEqual([
      { row: 2, column: 'stock', message: 'stock must be a whole number from 0 to 99,999 (got TRUE)' },
      { row: 3, column: 'price', message: 'price must be a whole number from 1 to 1,000,000,000 (got FALSE)' },
      { row: 4, column: 'stock', message: 'stock must be a whole number from 0 to 99,999 (got TRUE)' },
      { row: 5, column: 'stock', message: 'stock must be a whole number from 0 to 99,999 (got TRUE)' },
    ]);
    expect(s.valid.map((v) => v.product.stock)).toEqual([1]);
  });

  it('reads a TRUE saved as LibreOffice and Google Sheets write it (attributes before t, <f aca=...>) as TRUE', async () => {
    const sheet = await buildSheet(ENGLISH_HEADERS, [['A-1', 'Mug', 100, 5, 'C1'], ['A-2', 'Cup', 100, 5, 'C1']]);
    const s = await parse(replaceCells(sheet, {
      D2: '<c r="D2" s="0" t="b"><f aca="false">C2&gt;0</f><v>1</v></c>',
      D3: '<c r="D3" s="0" t="n"><f aca="false">C3&gt;0</f><v>1</v></c>',
    }));
    expect(s.errors).toEqual([{ row: 2, column: 'stock', message: 'stock must be a whole number from 0 to 99,999 (got TRUE)' }]);
    expect(s.valid.map((v) => v.product.stock)).toEqual([1]);
  });

  it('reads a formula whose saved result is "" as an empty cell, and one whose result is 0 as 0', async () => {
    const blank = (row: number) => ({ formula: `IF(Z${row}="","",Z${row})`, result: '' }) as ExcelJS.CellValue;
    const rows: ExcelJS.CellValue[][] = [
      ['A-1', 'Mug', 100, { formula: 'Z2-Z2', result: 0 } as ExcelJS.CellValue, 'C1', blank(2)],
      ['A-2', blank(3), 100, 1, 'C1'],
      ['A-3', 'Pot', { formula: 'Z4' } as unknown as ExcelJS.CellValue, 1, 'C1'],
    ];
    // a template's formulas dragged down to row 700, showing nothing: blank rows, not products
    for (let row = 5; row <= 700; row++) rows.push(Array.from({ length: 8 }, () => blank(row)));
    const s = await parse(await buildSheet(ENGLISH_HEADERS, rows));
    expect(s.rows).toBe(3);
    expect(s.valid.map((v) => v.product)).toEqual([{ sku: 'A-1', name: 'Mug', price: 100, stock: 0, category: 'C1' }]);
    expect(s.errors).toEqual([
      { row: 3, column: 'name', message: 'name is required' },
      { row: 4, column: 'price', message: 'price holds a formula with no saved result (an error, or never calculated): type the value instead' },
    ]);
  });

  it('does not count rows of formulas showing "" towards the 500', async () => {
    const rows: ExcelJS.CellValue[][] = productRows(sampleProducts('A', 500));
    for (let row = 502; row <= 700; row++) rows.push(Array.from({ length: 5 }, () => ({ formula: `IF(Z${row}="","",Z${row})`, result: '' }) as ExcelJS.CellValue));
    expect((await parse(await buildSheet(ENGLISH_HEADERS, rows))).valid).toHaveLength(500);
  });

  it('reads a whole number with floating-point noise as that number, and still refuses a fraction', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [
      ['A-1', 'Mug', { formula: '12000*1.1', result: 12000 * 1.1 } as ExcelJS.CellValue, 1, 'C1'],
      ['A-2', 'Cup', 12000 * 1.1, { formula: '0.1*30', result: 0.1 * 30 } as ExcelJS.CellValue, 'C1'],
      ['A-3', 'Pot', 13200.5, 1, 'C1'],
      ['A-4', 'Pan', 999_999_999.6, 1, 'C1'],
    ]));
    expect(12000 * 1.1).not.toBe(13200);
    expect(s.valid.map((v) => [v.product.price, v.product.stock])).toEqual([[13200, 1], [13200, 3]]);
    expect(s.errors).toEqual([
      { row: 4, column: 'price', message: 'price must be a whole number from 1 to 1,000,000,000; 13200.5 is not a whole number' },
      { row: 5, column: 'price', message: 'price must be a whole number from 1 to 1,000,000,000; 999999999.6 is not a whole number' },
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

  it('reads a hyperlink cell whose displayed text is empty as its target', async () => {
    const link = (n: number, text = 'PLACEHOLDER') => ({ text, hyperlink: `https://img.example.com/${n}.jpg?w=1&h=2` });
    const built = await buildSheet(ENGLISH_HEADERS, [
      ['A-1', 'Mug', 100, 1, 'C1', '', '', link(1)],
      ['A-2', 'Cup', 100, 1, 'C1', '', '', link(2)],
      ['A-3', 'Pot', 100, 1, 'C1', '', '', link(3, 'see the image')],
      ['A-4', 'Jar', 100, 1, 'C1', '', '', link(4)],
      ['A-5', 'Lid', 100, 1, 'C1'],
    ]);
    // exceljs cannot write a hyperlink with no text: the cells' text is emptied as Excel leaves it,
    // and H5's link is made to cover H5:H6, as Excel writes one link put on several cells
    const emptied = replaceCells(built, { H2: '<c r="H2" t="inlineStr"><is><t></t></is></c>', H3: '<c r="H3"/>', H5: '<c r="H5"/>' });
    const s = await parse(rewriteZip(emptied, (name, text) => (name === 'xl/worksheets/sheet1.xml' ? text.replace('ref="H5"', 'ref="H5:H6"') : text)));
    expect(s.valid.map((v) => [v.row, v.product.imageUrl])).toEqual([
      [2, 'https://img.example.com/1.jpg?w=1&h=2'], [3, 'https://img.example.com/2.jpg?w=1&h=2'],
      [5, 'https://img.example.com/4.jpg?w=1&h=2'], [6, 'https://img.example.com/4.jpg?w=1&h=2'],
    ]);
    // the cell's own text is read; the message names where its link leads
    expect(s.errors).toEqual([{
      row: 4, column: 'imageUrl',
      message: 'imageUrl must be an http or https URL (got "see the image", a link to "https://img.example.com/3.jpg?w=1&h=2": type the address itself in the cell)',
    }]);
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

  it('accepts only well-formed thousands separators in numbers stored as text', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [
      ['A-1', 'Mug', '1,234,567', '12,000', 'C1'],
      ['A-2', 'Cup', '12 000', ' 1,000 ', 'C1'],
      ['A-3', 'Pot', '12,00', '1,2,3', 'C1'],
      ['A-4', 'Pan', '1,2345', '1 2 3', 'C1'],
      ['A-5', 'Jar', '12,000원', '12,000.5', 'C1'],
    ]));
    expect(s.valid.map((v) => [v.product.price, v.product.stock])).toEqual([[1234567, 12000], [12000, 1000]]);
    const misplaced = (field: string, rule: string, got: string) =>
      `${field} must be a whole number from ${rule} (got "${got}"); a decimal comma or a misplaced thousands separator is not accepted: type the number without separators`;
    expect(s.errors).toEqual([
      { row: 4, column: 'price', message: misplaced('price', '1 to 1,000,000,000', '12,00') },
      { row: 4, column: 'stock', message: misplaced('stock', '0 to 99,999', '1,2,3') },
      { row: 5, column: 'price', message: misplaced('price', '1 to 1,000,000,000', '1,2345') },
      { row: 5, column: 'stock', message: misplaced('stock', '0 to 99,999', '1 2 3') },
      { row: 6, column: 'price', message: 'price must be a whole number from 1 to 1,000,000,000 (got "12,000원"); remove the currency sign or unit ("원") and type the number only' },
      { row: 6, column: 'stock', message: 'stock must be a whole number from 0 to 99,999; 12000.5 is not a whole number' },
    ]);
  });

  it('refuses dates in every field', async () => {
    const s = await parse(await buildSheet(ENGLISH_HEADERS, [['A-1', new Date('2024-01-02'), new Date('2024-01-02'), 1, 'C1']]));
    expect(s.errors.map((e) => e.column)).toEqual(['name', 'price']);
    expect(s.errors[0]!.message).toContain('date');
  });

  it('refuses a formula whose saved result is a date, as it refuses a typed date', async () => {
    const released = (formula: string, day: number) => ({ formula, result: new Date(Date.UTC(2026, 0, day)) }) as ExcelJS.CellValue;
    const s = await parse(await buildSheet([...ENGLISH_HEADERS, 'released'], [
      ['A-1', 'Mug', released('I2', 2), 1, 'C1', '', '', '', new Date(Date.UTC(2026, 0, 2))],
      ['A-2', 'Cup', 12000, 1, 'C1', '', '', '', released('I2+30', 1 + 31)],
      // a number in a cell formatted as a number stays a number
      ['A-3', 'Pot', { formula: '6000*2', result: 12000 } as ExcelJS.CellValue, 1, 'C1'],
    ], {
      after: (wb) => {
        const ws = wb.getWorksheet('products')!;
        for (const ref of ['C2', 'I2', 'I3']) ws.getCell(ref).numFmt = 'yyyy-mm-dd';
        ws.getCell('C4').numFmt = '#,##0';
      },
    }));
    expect(s.errors).toEqual([
      { row: 2, column: 'price', message: 'price holds a date; dates are not valid values' },
      { row: 2, column: 'released', message: '"released" holds a date; dates are not valid values, type the text instead' },
      { row: 3, column: 'released', message: '"released" holds a date; dates are not valid values, type the text instead' },
    ]);
    // the reports write it back as the date it is
    expect(s.raw.find((r) => r.row === 2)!.values.price).toEqual({ date: '2026-01-02T00:00:00.000Z' });
    expect(s.valid.map((v) => [v.row, v.product.price])).toEqual([[4, 12000]]);
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

  it('says what other content is instead of calling it CSV', async () => {
    expect(await rejection(parse(Buffer.from('%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj\n'), 'p.xlsx'))).toBe('this .xlsx file is a PDF document, not a workbook: upload the sheet saved as .xlsx.');
    // mostly text, but with NUL bytes: binary
    const binary = Buffer.concat([Buffer.from('sku,name,price,stock,category\n'), Buffer.from([0, 1, 2, 0]), Buffer.from('A,Mug,100,1,C1\n'.repeat(200))]);
    expect(await rejection(parse(binary, 'p.xlsx'))).toBe('this .xlsx file is not an .xlsx workbook (its content is not recognised): save the sheet as .xlsx.');
    expect(await rejection(parse(Buffer.from([0, 1, 2, 3, 255, 254, 0, 0, 9, 10]), 'p.csv'))).toBe(
      'this .csv file holds binary data, not CSV text or a spreadsheet: export the sheet as CSV again or save it as .xlsx, and upload the new file.',
    );
    const notASheet = 'this .xlsx file holds plain text, not a product sheet (its first line names none of the columns sku, name, price, stock, category): upload the sheet saved as .xlsx.';
    expect(await rejection(parse(Buffer.from('this is not a spreadsheet at all, just text\n'), 'p.xlsx'))).toBe(notASheet);
    expect(await rejection(parse(Buffer.from('root:$6$abc$def:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n'), 'p.xlsx'))).toBe(notASheet);
    // a table with other headers still reads as CSV
    expect(await rejection(parse(Buffer.from('code;title;amount\n1;Mug;100\n'), 'p.xlsx'))).toBe('this .xlsx file holds CSV text: save it as .xlsx or rename it .csv.');
    // Korean headers, in the CP949 Korean Excel writes, one line only
    const korean = readFileSync(join(FIXTURES_DIR, 'products-cp949.csv'));
    const headerLine = korean.subarray(0, korean.indexOf(0x0a) + 1);
    expect(await rejection(parse(headerLine, 'p.xlsx'))).toBe('this .xlsx file holds CSV text: save it as .xlsx or rename it .csv.');
  });

  it('says an image is an image (a screenshot of the sheet), and text that merely starts like one is not', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);
    expect(await rejection(parse(png, 'p.xlsx'))).toBe('this .xlsx file is an image (PNG), not a workbook: a picture of a sheet cannot be read; upload the sheet itself, saved as .xlsx.');
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF'), Buffer.alloc(64)]);
    expect(await rejection(parse(jpeg, 'products.csv'))).toBe('this .csv file is an image (JPEG), not a workbook: a picture of a sheet cannot be read; upload the sheet itself, saved as .xlsx.');
    const heic = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic'), Buffer.alloc(64)]);
    expect(await rejection(parse(heic, 'p.xlsx'))).toBe('this .xlsx file is an image (HEIC), not a workbook: a picture of a sheet cannot be read; upload the sheet itself, saved as .xlsx.');
    expect(await rejection(parse(Buffer.from('GIF89a\x01\x00'), 'p.xlsx'))).toContain('is an image (GIF)');
    // a CSV with cells that begin with some of a signature's letters is still CSV
    expect(await rejection(parse(Buffer.from('sku,name\nBM1,GIF bag\n'), 'p.xlsx'))).toBe('this .xlsx file holds CSV text: save it as .xlsx or rename it .csv.');
  });

  it('rejects an Apple Numbers document, saying how to export it', async () => {
    const numbers = writeZip([{ name: 'Index/Document.iwa', data: Buffer.alloc(16) }, { name: 'Metadata/Properties.plist', data: Buffer.from('<plist/>') }]);
    expect(await rejection(parse(numbers, 'products.xlsx'))).toBe('this .xlsx file is an Apple Numbers document: export it as Excel (File > Export To > Excel) and upload the .xlsx file.');
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
    // a sound zip whose sheet XML is cut short: its rows after the cut would be lost without a word
    const cut = rewriteZip(good, (name, text) => (name === 'xl/worksheets/sheet1.xml' ? text.slice(0, Math.floor(text.length * 0.6)) : text));
    expect(await rejection(parse(cut))).toContain('damaged or incomplete');
    const zipOnly = Buffer.from('504b0304140000000800', 'hex');
    const emptyDirectory = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');
    expect(await rejection(parse(Buffer.concat([zipOnly, Buffer.alloc(100), emptyDirectory])))).toContain('zip archive but not an .xlsx workbook');
    const noise = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 256));
    expect(await rejection(parse(noise))).toContain('not an .xlsx workbook');
    expect(await rejection(parse(Buffer.alloc(0)))).toContain('empty');
  });

  it('rejects a workbook whose part does not match its checksum, which exceljs would read as other values', async () => {
    const good = await buildProductSheet(sampleProducts('A', 20));
    const entries = readZipDirectory(good)!;
    const sheet = entries.find((e) => e.name === 'xl/worksheets/sheet1.xml')!;
    const text = inflateRawSync(entryData(good, sheet)!).toString('utf8');
    // one digit of a price changed, as a bad copy changes a byte; the part still inflates
    const at = text.indexOf('<v>', text.indexOf('r="C3"')) + 3;
    const edited = Buffer.from(text.slice(0, at) + (text[at] === '9' ? '8' : '9') + text.slice(at + 1));
    const parts = (crc: number) => entries.map((e) => e === sheet
      ? { name: e.name, deflated: { bytes: deflateRawSync(edited), size: edited.length, crc } }
      : { name: e.name, data: e.method === 8 ? inflateRawSync(entryData(good, e)!) : entryData(good, e)! });
    expect(await rejection(parse(writeZip(parts(crc32(Buffer.from(text))))))).toBe(
      "this .xlsx file is damaged (a part's contents do not match its checksum): save it as .xlsx again and upload the new file.",
    );
    // the same edit with its own checksum is a sound workbook: the check is what refused it
    expect((await parse(writeZip(parts(crc32(edited))))).valid).toHaveLength(20);
  });

  it('refuses a file over 10 MiB before reading it', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync(join((await import('node:os')).tmpdir(), 'br-'));
    const path = join(dir, 'big.xlsx');
    writeFileSync(path, Buffer.alloc(10 * 1024 * 1024 + 1));
    expect(await rejection(loadSheet(path))).toBe('the file is 10,485,761 bytes, more than the 10 MiB (10,485,760 bytes) allowed: remove images or split the products into several files.');
    expect(await rejection(loadSheet(join(dir, 'missing.xlsx')))).toContain('does not exist');
  });

  it('names a folder by its path as given, not at the start of the sentence (which the CLI capitalises)', async () => {
    const { mkdirSync, mkdtempSync } = await import('node:fs');
    const folder = join(mkdtempSync(join((await import('node:os')).tmpdir(), 'br-')), 'myfolder');
    mkdirSync(folder);
    const msg = await rejection(loadSheet(folder));
    expect(msg).toBe(`the path ${folder} is a folder: give the path of the .xlsx sheet itself.`);
    expect(await rejection(loadSheet('myfolder-that-is-missing.xlsx'))).toMatch(/^the file myfolder-that-is-missing\.xlsx does not exist/);
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
