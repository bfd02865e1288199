/**
 * Workbooks as openpyxl (and so pandas' to_excel) writes them, built here
 * without Python: exceljs writes the sheet, and the parts openpyxl writes
 * differently are rewritten as openpyxl has them.
 */
import { describe, expect, it } from 'vitest';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { buildSheet, ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { rewriteZip } from '../helpers/zip-writer.js';

const ROW = ['P-1', 'Mug', 12000, 30, 'C0101'];

/** openpyxl gives the workbook's relationships absolute targets: Target="/xl/worksheets/sheet1.xml". */
function absoluteTargets(xlsx: Buffer): Buffer {
  return rewriteZip(xlsx, (name, text) => (name === 'xl/_rels/workbook.xml.rels' ? text.replace(/Target="(?!\/)/g, 'Target="/xl/') : text));
}

describe('workbooks written by openpyxl', () => {
  it('reads the sheet named products (or 상품) when the relationships have absolute targets', async () => {
    const notesFirst = await buildSheet(ENGLISH_HEADERS, [ROW], { before: (wb) => wb.addWorksheet('notes').addRow(['fill in the products sheet']) });
    const s = await parseSheetBytes(absoluteTargets(notesFirst), 'pandas.xlsx');
    expect(s.errors).toEqual([]);
    expect(s.valid.map((v) => v.product.sku)).toEqual(['P-1']);

    const korean = await parseSheetBytes(absoluteTargets(await buildSheet(ENGLISH_HEADERS, [ROW], { sheetName: '상품' })), 'ko.xlsx');
    expect(korean.valid.map((v) => v.product.sku)).toEqual(['P-1']);
  });

  it('skips a hidden first sheet when no sheet is named products', async () => {
    const hiddenFirst = await buildSheet(ENGLISH_HEADERS, [ROW], {
      sheetName: 'items',
      before: (wb) => { wb.addWorksheet('old', { state: 'hidden' }).addRow(['sku']); },
    });
    const s = await parseSheetBytes(absoluteTargets(hiddenFirst), 'hidden.xlsx');
    expect(s.valid.map((v) => v.product.sku)).toEqual(['P-1']);
  });
});
