import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { decodeCsv } from '../../src/excel/read-csv.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { rejection } from '../helpers/rejection.js';

describe('CSV beside .xlsx', () => {
  for (const file of ['products-cp949.csv', 'products-utf8-bom.csv']) {
    it(`reads ${file} with the same rules and messages`, async () => {
      const s = await parseSheetBytes(readFileSync(join(FIXTURES_DIR, file)), file);
      expect(s.rows).toBe(3);
      expect(s.valid.map((v) => v.product)).toEqual([
        { sku: 'K-1', name: '도자기 머그컵', price: 12000, stock: 30, category: 'C0101', brand: '에이스' },
        { sku: 'K-2', name: '유리컵 "세트"', price: 8000, stock: 5, category: 'C0102' },
      ]);
      expect(s.errors).toEqual([{ row: 5, column: 'price', message: 'price must be a whole number from 1 to 1,000,000,000; 12.5 is not a whole number' }]);
    });
  }

  it('detects the encoding', () => {
    expect(decodeCsv(readFileSync(join(FIXTURES_DIR, 'products-cp949.csv'))).encoding).toBe('cp949');
    expect(decodeCsv(Buffer.from('sku,name\n', 'utf8')).encoding).toBe('utf-8');
  });

  it('rejects an over-long CSV like a sheet', async () => {
    const lines = ['sku,name,price,stock,category', ...Array.from({ length: 501 }, (_, i) => `S${i},N,1,1,C`)];
    await expect(parseSheetBytes(Buffer.from(lines.join('\n')), 'p.csv')).rejects.toThrow('the file has 501 product rows; at most 500 are allowed');
  });
});

describe('CSV files as spreadsheet programs write them', () => {
  const csv = (text: string, name = 'p.csv') => parseSheetBytes(Buffer.from(text), name);

  it('reads UTF-16 with a BOM (LE or BE), tab-separated, as Excel\'s "Unicode Text" writes it', async () => {
    const text = 'sku\tname\tprice\tstock\tcategory\r\nU-1\t머그컵\t12,000\t3\tC1\r\n';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.from(le.subarray(2)).swap16();
    for (const [bytes, name] of [[le, 'p.csv'], [Buffer.concat([Buffer.from([0xfe, 0xff]), be]), 'p.csv'], [le, 'unicode.txt']] as const) {
      const s = await parseSheetBytes(bytes, name);
      expect(s.errors).toEqual([]);
      expect(s.valid.map((v) => v.product)).toEqual([{ sku: 'U-1', name: '머그컵', price: 12000, stock: 3, category: 'C1' }]);
    }
    expect(decodeCsv(le).encoding).toBe('utf-16le');
    // the same text in UTF-8 reads the same
    expect((await csv(text)).valid).toHaveLength(1);
  });

  it('refuses a quote that is never closed, naming its line, instead of swallowing the rest', async () => {
    const msg = await rejection(csv('sku,name,price,stock,category\nA,"unterminated,100,1,C\nB,n,100,1,C\n'));
    expect(msg).toBe('the file has a quoted value starting on line 2 that is never closed: check the quotes on line 2 (write "" for a quote inside a value) and upload again.');
    // lines are counted as a text editor counts them: a value over two lines, CRLF
    const later = 'sku,name,price,stock,category\r\nA,"two\r\nlines",100,1,C\r\nB,"open,100,1,C\r\nC,n,100,1,C\r\n';
    expect(await rejection(csv(later))).toContain('starting on line 4 that is never closed');
    // closed by the quote of a later value: the lines between would become one cell
    const swallowed = 'sku,name,price,stock,category\nA,"open,100,1,C\nB,n,100,1,C\nC,"Cup",100,1,C\n';
    expect(await rejection(csv(swallowed))).toContain('starting on line 2 that runs over several lines and has more text after its closing quote');
  });

  it('keeps quoted values over several lines, with doubled quotes, and their row numbers', async () => {
    const s = await csv('sku,name,price,stock,category\nA,"a ""big""\nmug",100,1,C\nB,n,x,1,C\n');
    // text is trimmed, nothing more (excel-format.md): the line break stays
    expect(s.valid.map((v) => v.product.name)).toEqual(['a "big"\nmug']);
    expect(s.errors).toEqual([{ row: 3, column: 'price', message: expect.stringContaining('whole number') }]);
  });

  it('applies the thousands-separator rule to quoted CSV values and to semicolon-separated ones', async () => {
    const comma = await csv('sku,name,price,stock,category\nA,n,"12,000",1,C\nB,n,"12,00",1,C\n');
    expect(comma.valid.map((v) => v.product.price)).toEqual([12000]);
    expect(comma.errors).toEqual([{ row: 3, column: 'price', message: expect.stringContaining('(got "12,00"); a decimal comma or a misplaced thousands separator is not accepted') }]);
    const semicolon = await csv('sku;name;price;stock;category\nA;n;12,000;1;C\nB;n;12,5;1;C\n');
    expect(semicolon.valid.map((v) => v.product.price)).toEqual([12000]);
    expect(semicolon.errors).toEqual([{ row: 3, column: 'price', message: expect.stringContaining('(got "12,5"); a decimal comma') }]);
  });

  it('speaks of the file, not of a sheet named "CSV"', async () => {
    expect(await rejection(csv('sku,name,stock,category\nA,n,1,C\n'))).toBe('the file has no "price" column in row 1: add the header (see the template) and upload again.');
    expect(await rejection(csv('sku,name,price,stock,category\n'))).toBe('no products found: the file has a header row but no product rows.');
    expect(await rejection(csv('sku,name,price,stock,category,SKU\nA,n,1,1,C,B\n'))).toMatch(/^the file has two columns headed "SKU"/);
    const empty = await rejection(csv(''));
    expect(empty).toBe('the file is empty: export the sheet as CSV again (or save it as .xlsx) and upload the new file.');
    expect(empty).not.toContain('save the sheet as .xlsx');
  });
});
