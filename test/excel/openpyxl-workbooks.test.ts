/**
 * Workbooks as openpyxl (and so pandas' to_excel) writes them, built here
 * without Python: exceljs writes the sheet, and the parts openpyxl writes
 * differently are rewritten as openpyxl has them.
 */
import { describe, expect, it } from 'vitest';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { buildSheet, ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { replaceCells, rewriteZip } from '../helpers/zip-writer.js';

const ROW = ['P-1', 'Mug', 12000, 30, 'C0101'];

/** openpyxl writes a string in its cell (inlineStr); rich text (CellRichText) as one run per formatting. */
function inlineRich(ref: string, runs: string): string {
  return `<c r="${ref}" t="inlineStr"><is>${runs}</is></c>`;
}

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

  it('reads rich text stored in its cell as the text of all its runs', async () => {
    const file = replaceCells(await buildSheet(ENGLISH_HEADERS, [ROW, ['P-2', 'Cup', 9000, 3, 'C0101', 'Acme']]), {
      B1: inlineRich('B1', '<r><t>na</t></r><r><rPr><b val="1" /></rPr><t>me</t></r>'),
      B2: inlineRich('B2', '<r><t xml:space="preserve">머그 </t></r><r><rPr><b val="1" /></rPr><t>350ml</t></r><r><t xml:space="preserve"> &amp; lid</t></r>'),
      // a run with no formatting of its own comes first as a bare <t>; the phonetic guide (<rPh>) is not shown in the cell
      F3: inlineRich('F3', '<t>Ac</t><r><rPr><i val="1" /></rPr><t>me</t></r><rPh sb="0" eb="1"><t>ア</t></rPh>'),
    });
    const s = await parseSheetBytes(file, 'rich.xlsx');
    expect(s.errors).toEqual([]);
    expect(s.valid.map((v) => v.product)).toEqual([
      { sku: 'P-1', name: '머그 350ml & lid', price: 12000, stock: 30, category: 'C0101' },
      { sku: 'P-2', name: 'Cup', price: 9000, stock: 3, category: 'C0101', brand: 'Acme' },
    ]);
  });
});
