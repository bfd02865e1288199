/**
 * Merged cells, as sellers use them: a category or a brand merged down over the
 * products it is for. A spreadsheet keeps the value in the range's top-left cell
 * only; the sheet reader gives it to each product row of that column, and says so.
 */
import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { spreadMerged } from '../../src/excel/parse-products.js';
import { ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { errorReason, rowReason, warningReason } from '../../src/console/assets/row-reasons.js';
import { EMPTY, type SheetRow } from '../../src/excel/sheet-cell.js';
import { rewriteZip } from '../helpers/zip-writer.js';

/** A workbook of `rows` under the English headers, with `merges` ("E2:E4") merged after the values are in. */
async function sheetWith(rows: unknown[][], merges: string[]): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('products');
  ws.addRow(ENGLISH_HEADERS);
  for (const r of rows) ws.addRow(r);
  for (const m of merges) ws.mergeCells(m);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

const row = (sku: string, category: unknown = 'C0101', name: unknown = 'Mug', price: unknown = 12000) => [sku, name, price, 30, category, 'Acme'];

describe('merged cells', () => {
  it("gives a range's value to each product row it spans in its column, and warns once", async () => {
    const s = await parseSheetBytes(await sheetWith([
      row('A-1', 'C0101'), row('A-2', null), row('A-3', null),
      row('B-1', 'C0202'), row('B-2', null),
    ], ['E2:E4', 'E5:E6']), 'merged.xlsx');
    expect(s.errors).toEqual([]);
    expect(s.valid.map((v) => [v.row, v.product.category])).toEqual([[2, 'C0101'], [3, 'C0101'], [4, 'C0101'], [5, 'C0202'], [6, 'C0202']]);
    // the failed-only file and the result workbook show what was read
    expect(s.raw.find((r) => r.row === 4)?.values.category).toBe('C0101');
    expect(s.warnings).toEqual(["cells E2:E4, E5:E6 are merged: the value in each range's top cell was used for every product row it spans."]);
    expect(warningReason(s.warnings[0]!, 'ko')).toBe('E2:E4, E5:E6 셀이 병합되어 있어, 각 범위 맨 위 셀의 값을 그 범위에 걸친 모든 상품 행에 사용했습니다.');
  });

  it("finds the ranges of a sheet whose id in workbook.xml is not its part's number", async () => {
    // Excel keeps a sheet's id when a sheet before it is deleted: the products sheet, id 3, is in sheet1.xml
    const file = rewriteZip(await sheetWith([row('A-1', 'C0101'), row('A-2', null)], ['E2:E3']), (name, text) =>
      (name === 'xl/workbook.xml' ? text.replace('sheetId="1"', 'sheetId="3"') : text));
    const s = await parseSheetBytes(file, 'renumbered.xlsx');
    expect(s.errors).toEqual([]);
    expect(s.valid.map((v) => [v.row, v.product.category])).toEqual([[2, 'C0101'], [3, 'C0101']]);
  });

  it('says where the value is when a required cell lies in a range across columns', async () => {
    const s = await parseSheetBytes(await sheetWith([row('A-1'), row('A-2', 'C0101', 'Big mug', null)], ['B3:C3']), 'across.xlsx');
    expect(s.valid.map((v) => v.row)).toEqual([2]);
    expect(s.errors).toEqual([{
      row: 3, column: 'price',
      message: 'price is required (C3 is part of the merged cells B3:C3, whose one value is in B3: unmerge them and type the value in each cell)',
    }]);
    expect(s.warnings).toEqual([]);
    expect(rowReason(s.errors[0]!.message, 'ko')).toBe('필수 항목입니다. C3 셀은 병합된 셀 B3:C3에 속해 있어 값은 B3에만 있습니다. 병합을 해제하고 각 셀에 값을 입력하세요');
  });

  it('leaves a row with nothing of its own skipped, a range with an empty top cell empty, and the header row alone', async () => {
    const s = await parseSheetBytes(await sheetWith([
      row('A-1', 'C0101'), [], row('A-3', null),
      row('B-1', null), row('B-2', null),
    ], ['E2:E4', 'E5:E6', 'G1:H1']), 'edges.xlsx');
    expect(s.valid.map((v) => [v.row, v.product.category])).toEqual([[2, 'C0101'], [4, 'C0101']]);
    // row 3 was empty: still skipped. E5:E6's top cell is empty: both rows lack a category
    expect(s.errors.map((e) => [e.row, e.message])).toEqual([[5, 'category is required'], [6, 'category is required']]);
    expect(s.warnings).toEqual(['cells E2:E4 are merged: the value in E2 was used for every product row they span.']);
    expect(warningReason(s.warnings[0]!, 'ko')).toBe('E2:E4 셀이 병합되어 있어, E2 셀의 값을 그 범위에 걸친 모든 상품 행에 사용했습니다.');
  });

  it('keeps a value a cell inside a range holds of its own (a file written by a program)', () => {
    const text = (t: string) => ({ kind: 'text' as const, text: t });
    const rows: SheetRow[] = [{ row: 2, cells: [text('a')] }, { row: 3, cells: [text('b')] }, { row: 4, cells: [EMPTY, text('x')] }];
    const { rows: out, spread } = spreadMerged(rows, [{ top: 2, bottom: 4, left: 0, right: 0 }]);
    expect(out.map((r) => r.cells[0])).toEqual([text('a'), text('b'), text('a')]);
    expect(spread).toHaveLength(1);
    // the input is not changed
    expect(rows[2]!.cells[0]).toBe(EMPTY);
  });

  it('visits only the rows read when ranges claim the whole sheet (a hostile file)', () => {
    const text = (t: string) => ({ kind: 'text' as const, text: t });
    const rows: SheetRow[] = Array.from({ length: 500 }, (_, i) => ({ row: i + 2, cells: i === 0 ? [text('v')] : [EMPTY, text('x')] }));
    const huge = { top: 2, bottom: 1_048_576, left: 0, right: 199 };
    const many = Array.from({ length: 10_000 }, () => huge);
    const { rows: out, spread, within } = spreadMerged(rows, many);
    expect(out.every((r) => r.cells[0]!.kind === 'text' && (r.cells[0] as { text: string }).text === 'v')).toBe(true);
    expect(spread).toHaveLength(1);
    expect(within(400, 150)).toBe(huge);
    expect(within(400, 0)).toBeUndefined();
  });

  it('says so when a header merged over two columns leaves a required column without one', async () => {
    const refused = await parseSheetBytes(await sheetWith([row('A-1')], ['A1:B1']), 'header.xlsx').then(() => undefined, (err: Error) => err.message);
    expect(refused).toBe('the sheet "products" has no "name" column in row 1: add the header (see the template) and upload again. Row 1 has merged cells (A1:B1): unmerge them so that each column has its own header.');
    expect(errorReason(refused!, 'ko')).toBe('"products" 시트의 1행에 "name" 열이 없습니다. 1행에 병합된 셀(A1:B1)이 있으니 병합을 해제해 각 열에 머리글을 넣고, 양식을 참고해 다시 올려 주세요.');
  });
});
