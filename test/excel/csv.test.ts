import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { decodeCsv } from '../../src/excel/read-csv.js';
import { FIXTURES_DIR } from '../../src/paths.js';

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
