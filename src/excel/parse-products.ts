/**
 * The sheet's rules (excel-format.md), pure: header cells and rows in,
 * products, row errors and warnings out. No I/O.
 */
import { UploadRejected } from './errors.js';
import {
  FIELDS, MAX_PRODUCT_ROWS, REQUIRED, TEXT_LIMITS, WHOLE_LIMITS, fieldForHeader,
  type Field, type Product,
} from './fields.js';
import { isEmptyCell, type SheetCell, type SheetData } from './sheet-cell.js';

export interface RowError {
  /** The spreadsheet's own row number (header = 1). */
  row: number;
  /** The field's name, as in excel-format.md. */
  column: string;
  message: string;
}

export interface ParsedRow {
  row: number;
  product: Product;
}

export interface ParsedSheet {
  /** Product rows read (non-empty rows after the header). */
  rows: number;
  valid: ParsedRow[];
  errors: RowError[];
  warnings: string[];
  /** Every non-empty row as the seller wrote it, by field, for reports. */
  raw: Array<{ row: number; values: Partial<Record<Field, string>> }>;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** A value quoted for a message: control characters removed, long text cut. */
export function quote(text: string): string {
  const clean = stripControls(text);
  return JSON.stringify(clean.length > 40 ? `${clean.slice(0, 37)}...` : clean);
}

// C0 and C1 control characters, except tab and line breaks.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
export function stripControls(text: string): string {
  return text.replace(CONTROLS, '');
}

/** The text a seller sees in the cell, for reports and messages. */
export function displayText(cell: SheetCell | undefined): string {
  if (!cell) return '';
  switch (cell.kind) {
    case 'empty': return '';
    case 'text': return cell.text;
    case 'number': return String(cell.value);
    case 'bool': return cell.value ? 'TRUE' : 'FALSE';
    case 'date': return '(date)';
    case 'error': return `(${cell.text})`;
  }
}

type Check<T> = { ok: true; value: T | undefined } | { ok: false; message: string };

function readText(field: Field, cell: SheetCell | undefined): Check<string> {
  const { min, max } = TEXT_LIMITS[field]!;
  if (!cell || isEmptyCell(cell)) {
    return min > 0 ? { ok: false, message: `${field} is required` } : { ok: true, value: undefined };
  }
  if (cell.kind === 'date') return { ok: false, message: `${field} holds a date; dates are not valid values, type the text instead` };
  if (cell.kind === 'error') return { ok: false, message: `${field} holds ${cell.text}` };
  const text = field === 'description' ? stripControls(displayText(cell)).trim() : stripControls(displayText(cell)).replace(/\s+/g, ' ').trim();
  if (text.length < min) return { ok: false, message: `${field} is required` };
  if ([...text].length > max) return { ok: false, message: `${field} must be at most ${fmt(max)} characters (got ${fmt([...text].length)})` };
  return { ok: true, value: text === '' ? undefined : text };
}

function readWhole(field: Field, cell: SheetCell | undefined): Check<number> {
  const { min, max } = WHOLE_LIMITS[field]!;
  const rule = `${field} must be a whole number from ${fmt(min)} to ${fmt(max)}`;
  if (!cell || isEmptyCell(cell)) return { ok: false, message: `${field} is required` };
  if (cell.kind === 'date') return { ok: false, message: `${field} holds a date; dates are not valid values` };
  if (cell.kind === 'error') return { ok: false, message: `${field} holds ${cell.text}` };
  let n: number;
  if (cell.kind === 'number') {
    n = cell.value;
  } else if (cell.kind === 'text') {
    const compact = cell.text.replace(/[\s,]/g, '');
    if (!/^[+-]?\d+(\.\d+)?$/.test(compact)) return { ok: false, message: `${rule} (got ${quote(cell.text.trim())})` };
    n = Number(compact);
  } else {
    return { ok: false, message: `${rule} (got ${displayText(cell)})` };
  }
  if (!Number.isInteger(n)) return { ok: false, message: `${rule}; ${n} is not a whole number` };
  if (n < min || n > max) return { ok: false, message: `${rule} (got ${fmt(n)})` };
  return { ok: true, value: n };
}

function readUrl(field: Field, cell: SheetCell | undefined): Check<string> {
  if (!cell || isEmptyCell(cell)) return { ok: true, value: undefined };
  if (cell.kind !== 'text') return { ok: false, message: `${field} must be an http or https URL (got ${quote(displayText(cell))})` };
  const text = stripControls(cell.text).trim();
  try {
    const url = new URL(text);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && text.length <= 2048) {
      return { ok: true, value: text };
    }
  } catch {
    // reported below
  }
  return { ok: false, message: `${field} must be an http or https URL (got ${quote(text)})` };
}

function readField(field: Field, cell: SheetCell | undefined): Check<string | number> {
  if (field in WHOLE_LIMITS) return readWhole(field, cell);
  if (field === 'imageUrl') return readUrl(field, cell);
  return readText(field, cell);
}

/**
 * Applies every rule of excel-format.md.
 * @throws UploadRejected for whole-file problems (missing column, no products, too many rows).
 */
export function parseProducts(sheet: SheetData): ParsedSheet {
  const columns = new Map<Field, number>();
  const warnings: string[] = [];
  const unknown: string[] = [];
  sheet.header.forEach((cell, index) => {
    const text = stripControls(displayText(cell)).trim();
    if (text === '') return;
    const field = fieldForHeader(text);
    if (!field) unknown.push(text);
    else if (columns.has(field)) warnings.push(`column ${quote(text)} repeats the ${field} column; only the first one is read.`);
    else columns.set(field, index);
  });
  const missing = REQUIRED.filter((f) => !columns.has(f));
  if (missing.length > 0) {
    const names = missing.map((f) => `"${f}"`).join(', ');
    throw new UploadRejected(
      `the sheet "${stripControls(sheet.sheetName)}" has no ${names} column${missing.length > 1 ? 's' : ''} in row 1: add the header${missing.length > 1 ? 's' : ''} (see the template) and upload again.`,
    );
  }
  if (unknown.length > 0) {
    warnings.push(`unknown column${unknown.length > 1 ? 's' : ''} ignored: ${unknown.slice(0, 20).map(quote).join(', ')}${unknown.length > 20 ? ', ...' : ''}.`);
  }

  const productRows = sheet.rows;
  if (sheet.overLimit || productRows.length > MAX_PRODUCT_ROWS) {
    const count = sheet.overLimit ? `more than ${fmt(productRows.length - 1)}` : fmt(productRows.length);
    throw new UploadRejected(
      `the file has ${count} product rows; at most ${fmt(MAX_PRODUCT_ROWS)} are allowed: split it into several files.`,
    );
  }
  if (productRows.length === 0) throw new UploadRejected('no products found: the sheet has a header row but no product rows.');

  const valid: ParsedRow[] = [];
  const errors: RowError[] = [];
  const raw: ParsedSheet['raw'] = [];
  const firstSeen = new Map<string, number>();
  for (const { row, cells } of productRows) {
    const values: Partial<Record<Field, string>> = {};
    const product: Record<string, string | number> = {};
    let rowOk = true;
    for (const field of FIELDS) {
      const index = columns.get(field);
      const cell = index === undefined ? undefined : cells[index];
      if (index !== undefined) values[field] = displayText(cell);
      if (index === undefined && !REQUIRED.includes(field)) continue;
      const check = readField(field, cell);
      if (!check.ok) {
        errors.push({ row, column: field, message: check.message });
        rowOk = false;
      } else if (check.value !== undefined) {
        product[field] = check.value;
      }
    }
    raw.push({ row, values });
    const sku = typeof product.sku === 'string' ? product.sku : undefined;
    if (sku !== undefined) {
      const first = firstSeen.get(sku);
      if (first !== undefined) {
        errors.push({ row, column: 'sku', message: `duplicate sku, first seen in row ${first}` });
        rowOk = false;
      } else {
        firstSeen.set(sku, row);
      }
    }
    if (rowOk) valid.push({ row, product: product as unknown as Product });
  }
  return { rows: productRows.length, valid, errors, warnings, raw };
}
