/**
 * Cells no rule accepts and no text can stand for (dates, error values,
 * formulas with no usable result) through the producer and the reports, against
 * a real redis-server: the failed-only file (and the result workbook) hold them
 * again as what they were, so a row the seller has not fixed is invalid again
 * for the same columns when the file is uploaded again as it is, and valid once
 * the seller types the values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { loadConfig, type Config } from '../../src/config.js';
import { REASON_HEADER } from '../../src/excel/fields.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import type { RowError } from '../../src/excel/parse-products.js';
import { buildSheet, ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { createRedis, type RedisClient } from '../../src/redis.js';
import { buildReport, readReportRows } from '../../src/report/upload-report.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { enqueueSheet } from '../helpers/uploads.js';

let server: TestRedis;
let redis: RedisClient;
let config: Config;

beforeAll(async () => {
  server = await startRedis();
  config = loadConfig({ REDIS_URL: server.url, QUEUE_PREFIX: '{unreadable-cells}' });
  redis = createRedis(config, 'cli');
  await redis.connect();
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const HEADERS = [...ENGLISH_HEADERS, 'origin'];
const DAY = new Date(Date.UTC(2024, 2, 5));
const NO_RESULT = { formula: 'Z99&"x"' } as ExcelJS.CellValue;
const REF = { error: '#REF!' } as ExcelJS.CellValue;
const ERROR_RESULT = { formula: '1/0', result: { error: '#DIV/0!' } } as ExcelJS.CellValue;
const ROWS: ExcelJS.CellValue[][] = [
  ['OK-1', 'Mug', 1000, 1, 'C1', 'Acme', 'A mug', '', 'Korea'],
  ['U-2', NO_RESULT, 1000, 1, 'C1', DAY, DAY, '', ''],
  ['U-3', REF, 1000, 1, 'C1', '', '', '', ''],
  [DAY, 'Pot', 1000, 1, 'C1', '', '', '', ''],
  ['U-5', 'Pan', 1000, 1, DAY, '', ERROR_RESULT, '', ''],
  ['U-6', 'Lid', 1000, 1, 'C1', REF, '', '', DAY],
  ['U-7', 'Cup', DAY, REF, 'C1', '', '', DAY, ''],
];
// the columns of ROWS that hold such a cell, row by row, and what the seller types there
const FIXES: Array<Record<string, string>> = [
  { name: 'Bowl', brand: 'Acme', description: 'A bowl' },
  { name: 'Plate' },
  { sku: 'U-4' },
  { category: 'C2', description: 'A pan' },
  { brand: 'Acme', origin: 'Japan' },
  { price: '900', stock: '3', imageUrl: 'https://img.example.com/cup.jpg' },
];

const enqueued = async (seller: string) => enqueueSheet(redis, config, seller, await buildSheet(HEADERS, ROWS));

/** Each invalid row's columns and messages, in row order, without the row numbers (the files number them differently). */
function problems(errors: RowError[]): Array<Array<[string, string]>> {
  const byRow = new Map<number, Array<[string, string]>>();
  for (const e of errors) byRow.set(e.row, [...(byRow.get(e.row) ?? []), [e.column, e.message]]);
  return [...byRow.keys()].sort((a, b) => a - b).map((row) => byRow.get(row)!);
}
const columnsOf = (p: Array<Array<[string, string]>>) => p.map((row) => row.map(([column]) => column));

describe('cells no rule accepts', () => {
  it('stay what they were in the failed-only file: uploaded again unfixed, the same rows are invalid for the same columns', async () => {
    const { sheet, uploadId } = await enqueued('UC1');
    expect(sheet.valid.map((v) => v.row)).toEqual([2]);
    const before = problems(sheet.errors);
    expect(columnsOf(before)).toEqual([['name', 'brand', 'description'], ['name'], ['sku'], ['category', 'description'], ['brand', 'origin'], ['price', 'stock', 'imageUrl']]);

    const found = await readReportRows(redis, config, uploadId);
    const fixBytes = await buildReport(found.rows, { failedOnly: true, columns: found.columns });
    const again = await parseSheetBytes(fixBytes, 'fix.xlsx');
    expect(again.valid).toEqual([]);
    const after = problems(again.errors);
    expect(columnsOf(after)).toEqual(columnsOf(before));
    // a date and an error value read back as they were read the first time
    const same: Array<[number, number]> = [[0, 1], [0, 2], [1, 0], [2, 0], [3, 0], [4, 0], [4, 1], [5, 0], [5, 1], [5, 2]];
    for (const [i, j] of same) expect(after[i]![j]).toEqual(before[i]![j]);
    // a formula with no usable result comes back as #N/A: still no value, said so
    expect(after[0]![0]).toEqual(['name', 'name holds the error #N/A']);
    expect(after[3]![1]).toEqual(['description', 'description holds the error #N/A']);
    // the reason column still says what was wrong the first time
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(fixBytes as never);
    const ws = wb.worksheets[0]!;
    expect(ws.getRow(1).getCell(HEADERS.length + 1).value).toBe(REASON_HEADER);
    expect(ws.getRow(2).getCell(HEADERS.length + 1).value).toContain('formula with no saved result');
    // the dates themselves are kept
    expect(ws.getRow(2).getCell(HEADERS.indexOf('brand') + 1).value).toEqual(DAY);
    expect(ws.getRow(4).getCell(1).value).toEqual(DAY);
  });

  it('fixed by the seller in the failed-only file, the rows are valid', async () => {
    const { uploadId } = await enqueued('UC2');
    const found = await readReportRows(redis, config, uploadId);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await buildReport(found.rows, { failedOnly: true, columns: found.columns })) as never);
    const ws = wb.worksheets[0]!;
    FIXES.forEach((fix, i) => {
      for (const [header, value] of Object.entries(fix)) ws.getRow(i + 2).getCell(HEADERS.indexOf(header) + 1).value = value;
    });
    const again = await parseSheetBytes(Buffer.from(await wb.xlsx.writeBuffer()), 'fixed.xlsx');
    expect(again.errors).toEqual([]);
    expect(again.valid.map((v) => v.product.sku)).toEqual(['U-2', 'U-3', 'U-4', 'U-5', 'U-6', 'U-7']);
    expect(again.valid[0]!.product).toEqual({ sku: 'U-2', name: 'Bowl', price: 1000, stock: 1, category: 'C1', brand: 'Acme', description: 'A bowl' });
    expect(again.valid[4]!.attributes).toEqual({ origin: 'Japan' });
  });

  it('stay what they were in the result workbook too', async () => {
    const { sheet, uploadId } = await enqueued('UC3');
    const found = await readReportRows(redis, config, uploadId);
    const again = await parseSheetBytes(await buildReport(found.rows, { failedOnly: false, columns: found.columns }), 'report.xlsx');
    // the report's own columns (row, status, productId, reason) read as extra columns: only the sheet's are compared
    const fields = (errors: RowError[]) => errors.filter((e) => HEADERS.includes(e.column));
    expect(again.valid.map((v) => v.product.sku)).toEqual(['OK-1']);
    expect(columnsOf(problems(fields(again.errors)))).toEqual(columnsOf(problems(sheet.errors)));
  });
});
