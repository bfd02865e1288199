/**
 * The per-row processing report of one upload: the rows as the seller wrote
 * them (every column the upload read, the extra ones too, in the sheet's
 * order and under the sheet's headers), a status (registered, duplicate,
 * failed, invalid, pending), the productId and the reason. `failedOnly`
 * writes the rows to fix, in the upload format, ready to correct and upload
 * again as it is.
 */
import ExcelJS from 'exceljs';
import type { Config } from '../config.js';
import { FIELDS, REASON_HEADER, WHOLE_LIMITS, type Field } from '../excel/fields.js';
import { ERROR_VALUES, type RawValue } from '../excel/cell-rules.js';
import type { RowError, SheetColumn } from '../excel/parse-products.js';
import { namespaceOf, uploadIndexKey } from '../keys.js';
import type { RedisClient } from '../redis.js';
import { uploadKeysOf } from '../seller-home.js';

export type RowStatus = 'registered' | 'duplicate' | 'failed' | 'cancelled' | 'invalid' | 'pending';

export interface ReportRow {
  row: number;
  values: Partial<Record<Field, RawValue>>;
  /** The extra columns' cells, by header. */
  extra?: Record<string, RawValue>;
  status: RowStatus;
  productId?: string;
  reason?: string;
}

export class UnknownUpload extends Error {
  override readonly name = 'UnknownUpload';
}

/** The columns of uploads stored before the sheet's own columns were kept: every field, by its name. */
export const FIELD_COLUMNS: readonly SheetColumn[] = FIELDS.map((field) => ({ header: field, field }));

/**
 * The sheet as enqueue-upload.ts stores it; `columns` and `extra` are absent in
 * older uploads, whose dates and error values are text ("(date)").
 */
interface StoredSheet {
  raw: Array<{ row: number; values: Partial<Record<Field, RawValue>>; extra?: Record<string, RawValue> }>;
  errors: RowError[];
  columns?: SheetColumn[];
}

export interface UploadRows {
  sellerId: string;
  file: string;
  /** The sheet's columns in its order (FIELD_COLUMNS for uploads stored without them). */
  columns: readonly SheetColumn[];
  rows: ReportRow[];
}

/** @throws UnknownUpload when the upload is unknown or its rows have expired. */
export async function readReportRows(redis: RedisClient, config: Config, uploadId: string): Promise<UploadRows> {
  const ns = namespaceOf(config.queuePrefix);
  const member = (await redis.zrange(uploadIndexKey(ns), '0', '-1')).find((m) => m.endsWith(`/${uploadId}`));
  if (!member) throw new UnknownUpload(`no upload ${uploadId} is known (it may have expired): check the id with \`bulk-register status\`.`);
  const sellerId = member.slice(0, member.indexOf('/'));
  const keys = await uploadKeysOf(redis, ns, sellerId, uploadId);
  const [sheetJson, results, file] = await Promise.all([redis.get(keys.sheet), redis.hgetall(keys.rows), redis.hget(keys.upload, 'file')]);
  if (!sheetJson) throw new UnknownUpload(`upload ${uploadId} has expired: its rows are no longer kept.`);
  const sheet = JSON.parse(sheetJson) as StoredSheet;
  const errorsByRow = new Map<number, RowError[]>();
  for (const e of sheet.errors) errorsByRow.set(e.row, [...(errorsByRow.get(e.row) ?? []), e]);
  const rows = sheet.raw.map(({ row, values, extra }): ReportRow => {
    const cells = { row, values, ...(extra ? { extra } : {}) };
    const errors = errorsByRow.get(row);
    if (errors) return { ...cells, status: 'invalid', reason: errors.map((e) => e.message).join('; ') };
    const result = results[String(row)];
    if (!result) return { ...cells, status: 'pending' };
    const r = JSON.parse(result) as { status: RowStatus; productId?: string; reason?: string };
    return { ...cells, status: r.status, ...(r.productId ? { productId: r.productId } : {}), ...(r.reason ? { reason: r.reason } : {}) };
  });
  const columns = sheet.columns && sheet.columns.length > 0 ? sheet.columns : FIELD_COLUMNS;
  return { sellerId, file: file ?? '', columns, rows };
}

/** Strings only: a cell is never written as a formula, whatever it starts with. */
function text(value: string | undefined): string {
  return value ?? '';
}

/**
 * A row's cell in one of the sheet's columns. A whole number in price or stock is
 * written as a number (as text, Excel flags every such cell "number stored as
 * text"); a date as a date and an error value as that error (as text, "(date)"
 * would be a valid name, brand or attribute once uploaded again); anything else
 * as the seller wrote it.
 */
function cellOf(r: ReportRow, column: SheetColumn): string | number | Date | ExcelJS.CellErrorValue {
  const value = column.field ? r.values[column.field] : r.extra?.[column.header];
  if (typeof value === 'object') {
    const date = 'date' in value ? new Date(value.date) : undefined;
    if (date && !Number.isNaN(date.getTime())) return date;
    const error = 'error' in value && ERROR_VALUES.has(value.error) ? value.error : '#N/A';
    return { error: error as ExcelJS.CellErrorValue['error'] };
  }
  const shown = text(value);
  return column.field !== undefined && column.field in WHOLE_LIMITS && /^-?\d{1,15}$/.test(shown) ? Number(shown) : shown;
}

/**
 * The result workbook: `row`, the sheet's columns, `status`, `productId`,
 * `reason`. With `failedOnly`, the failed and invalid rows under the sheet's
 * own columns, then REASON_HEADER, which an upload skips.
 * @param columns the sheet's columns in its order (readReportRows); default: every field by name
 */
export async function buildReport(rows: ReportRow[], opts: { failedOnly: boolean; columns?: readonly SheetColumn[] }): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('products', { views: [{ state: 'frozen', ySplit: 1 }] });
  const chosen = opts.failedOnly ? rows.filter((r) => r.status === 'failed' || r.status === 'invalid') : rows;
  const columns = opts.columns ?? FIELD_COLUMNS;
  // headers as the seller wrote them; the keys only need to be distinct
  const sheetColumns = columns.map((c, i) => ({ header: c.header, key: `c${i}`, width: 16 }));
  if (opts.failedOnly) {
    ws.columns = [...sheetColumns, { header: REASON_HEADER, key: 'reason', width: 60 }];
    for (const r of chosen) ws.addRow([...columns.map((c) => cellOf(r, c)), text(r.reason)]);
  } else {
    ws.columns = [
      { header: 'row', key: 'row', width: 6 },
      ...sheetColumns,
      { header: 'status', key: 'status', width: 12 },
      { header: 'productId', key: 'productId', width: 22 },
      { header: 'reason', key: 'reason', width: 60 },
    ];
    for (const r of chosen) ws.addRow([r.row, ...columns.map((c) => cellOf(r, c)), r.status, text(r.productId), text(r.reason)]);
  }
  ws.getRow(1).font = { bold: true };
  // exceljs writes JS strings as text cells (never formulas); keep it so explicitly
  ws.eachRow((row, n) => {
    if (n === 1) return;
    row.eachCell((cell) => {
      if (typeof cell.value === 'string') cell.numFmt = '@';
    });
  });
  return Buffer.from(await wb.xlsx.writeBuffer());
}
