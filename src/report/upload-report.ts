/**
 * The per-row processing report of one upload: the rows as the seller wrote
 * them, a status (registered, duplicate, failed, invalid, pending), the
 * productId and the reason. `failedOnly` writes the rows to fix, in the upload
 * format, ready to correct and upload again.
 */
import ExcelJS from 'exceljs';
import type { Config } from '../config.js';
import { FIELDS, type Field } from '../excel/fields.js';
import type { RowError } from '../excel/parse-products.js';
import { namespaceOf, uploadIndexKey, uploadKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';

export type RowStatus = 'registered' | 'duplicate' | 'failed' | 'invalid' | 'pending';

export interface ReportRow {
  row: number;
  values: Partial<Record<Field, string>>;
  status: RowStatus;
  productId?: string;
  reason?: string;
}

export class UnknownUpload extends Error {
  override readonly name = 'UnknownUpload';
}

export async function readReportRows(redis: RedisClient, config: Config, uploadId: string): Promise<{ sellerId: string; file: string; rows: ReportRow[] }> {
  const ns = namespaceOf(config.queuePrefix);
  const member = (await redis.zrange(uploadIndexKey(ns), '0', '-1')).find((m) => m.endsWith(`/${uploadId}`));
  if (!member) throw new UnknownUpload(`no upload ${uploadId} is known (it may have expired): check the id with \`bulk-register status\`.`);
  const sellerId = member.slice(0, member.indexOf('/'));
  const keys = uploadKeys(ns, sellerId, uploadId);
  const [sheetJson, results, file] = await Promise.all([redis.get(keys.sheet), redis.hgetall(keys.rows), redis.hget(keys.upload, 'file')]);
  if (!sheetJson) throw new UnknownUpload(`upload ${uploadId} has expired: its rows are no longer kept.`);
  const sheet = JSON.parse(sheetJson) as { raw: Array<{ row: number; values: Partial<Record<Field, string>> }>; errors: RowError[] };
  const errorsByRow = new Map<number, RowError[]>();
  for (const e of sheet.errors) errorsByRow.set(e.row, [...(errorsByRow.get(e.row) ?? []), e]);
  const rows = sheet.raw.map(({ row, values }): ReportRow => {
    const errors = errorsByRow.get(row);
    if (errors) return { row, values, status: 'invalid', reason: errors.map((e) => e.message).join('; ') };
    const result = results[String(row)];
    if (!result) return { row, values, status: 'pending' };
    const r = JSON.parse(result) as { status: RowStatus; productId?: string; reason?: string };
    return { row, values, status: r.status, ...(r.productId ? { productId: r.productId } : {}), ...(r.reason ? { reason: r.reason } : {}) };
  });
  return { sellerId, file: file ?? '', rows };
}

/** Strings only: a cell is never written as a formula, whatever it starts with. */
function text(value: string | undefined): string {
  return value ?? '';
}

export async function buildReport(rows: ReportRow[], opts: { failedOnly: boolean }): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('products', { views: [{ state: 'frozen', ySplit: 1 }] });
  const chosen = opts.failedOnly ? rows.filter((r) => r.status === 'failed' || r.status === 'invalid') : rows;
  if (opts.failedOnly) {
    ws.columns = [...FIELDS.map((f) => ({ header: f, key: f, width: 16 })), { header: 'reason', key: 'reason', width: 60 }];
    for (const r of chosen) ws.addRow([...FIELDS.map((f) => text(r.values[f])), text(r.reason)]);
  } else {
    ws.columns = [
      { header: 'row', key: 'row', width: 6 },
      ...FIELDS.map((f) => ({ header: f, key: f, width: 16 })),
      { header: 'status', key: 'status', width: 12 },
      { header: 'productId', key: 'productId', width: 22 },
      { header: 'reason', key: 'reason', width: 60 },
    ];
    for (const r of chosen) ws.addRow([r.row, ...FIELDS.map((f) => text(r.values[f])), r.status, text(r.productId), text(r.reason)]);
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
