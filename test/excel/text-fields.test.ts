/**
 * Text fields (excel-format.md "Text is trimmed"): surrounding spaces go,
 * inner ones stay as written, and the duplicate check compares what is sent.
 */
import { describe, expect, it } from 'vitest';
import { parseProducts } from '../../src/excel/parse-products.js';
import { ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import type { SheetCell, SheetData } from '../../src/excel/sheet-cell.js';

const text = (t: string): SheetCell => ({ kind: 'text', text: t });

function sheet(rows: string[][], header = ENGLISH_HEADERS): SheetData {
  return { sheetName: 'products', header: header.map(text), rows: rows.map((cells, i) => ({ row: i + 2, cells: cells.map(text) })), overLimit: false };
}

describe('text fields', () => {
  it('keeps inner runs of spaces in sku, name, category and brand; trims the ends', () => {
    const s = parseProducts(sheet([[' W  2 ', 'Mug  350ml', '1', '1', 'C 01  A', ' Acme   Co ']]));
    expect(s.errors).toEqual([]);
    expect(s.valid[0]!.product).toEqual({ sku: 'W  2', name: 'Mug  350ml', price: 1, stock: 1, category: 'C 01  A', brand: 'Acme   Co' });
  });

  it('tells two SKUs apart by their inner spaces, and finds a real duplicate', () => {
    const s = parseProducts(sheet([['W  2', 'A', '1', '1', 'C'], ['W 2', 'B', '1', '1', 'C'], [' W 2 ', 'C', '1', '1', 'C']]));
    expect(s.valid.map((r) => [r.row, r.product.sku])).toEqual([[2, 'W  2'], [3, 'W 2']]);
    expect(s.errors).toEqual([{ row: 4, column: 'sku', message: 'duplicate sku, first seen in row 3' }]);
  });

  it('still matches a header with inner spaces (headers ignore them)', () => {
    const s = parseProducts(sheet([['A-1', 'Mug', '1', '1', 'C', '', '', 'https://img.example.com/1.jpg']], ['sku', 'name', 'price', 'stock', 'category', 'brand', 'description', 'image  url']));
    expect(s.valid[0]!.product.imageUrl).toBe('https://img.example.com/1.jpg');
  });
});
