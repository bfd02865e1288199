/**
 * A number typed in a text field and shown zero-padded by its format ("00000"
 * shows 12 as 00012): the text read is the text the seller sees. Only formats
 * made of zeros; any other format gives the number as before.
 */
import { describe, expect, it } from 'vitest';
import type ExcelJS from 'exceljs';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { ENGLISH_HEADERS, buildSheet } from '../../src/fixtures/build-sheet.js';

describe('a zero-padded number format in a text field', () => {
  it('gives the padded text for sku and category, and the number elsewhere', async () => {
    const bytes = await buildSheet(ENGLISH_HEADERS, [
      [12, 'Mug', 1000, 1, 101],
      [123456, 'Cup', 1000, 1, 7],
      [34, 'Pot', 1000, 1, 'C01'],
      [56, 'Jar', 1000, 1, 'C01'],
    ], {
      after: (wb: ExcelJS.Workbook) => {
        const ws = wb.getWorksheet('products')!;
        ws.getCell('A2').numFmt = '00000';
        ws.getCell('E2').numFmt = '0000';
        ws.getCell('A3').numFmt = '00000'; // wider than the format: all its digits
        ws.getCell('E3').numFmt = '"C"000'; // not made of zeros: as today
        ws.getCell('A4').numFmt = '#,##0';
        ws.getCell('A5').numFmt = '0.00';
        ws.getCell('C2').numFmt = '0000000'; // a number field reads the number
      },
    });
    const s = await parseSheetBytes(bytes, 'p.xlsx');
    expect(s.errors).toEqual([]);
    expect(s.valid.map((r) => [r.product.sku, r.product.category, r.product.price])).toEqual([
      ['00012', '0101', 1000], ['123456', '7', 1000], ['34', 'C01', 1000], ['56', 'C01', 1000],
    ]);
    expect(s.raw[0]!.values.sku).toBe('00012');
  });
});
