/**
 * One cell under the sheet's rules (excel-format.md), pure: a cell in, its value
 * or the sentence a seller reads out. parse-products.ts applies them row by row.
 */
import { TEXT_LIMITS, WHOLE_LIMITS, type Field } from './fields.js';
import { isEmptyCell, type SheetCell } from './sheet-cell.js';

/**
 * A cell no rule accepts and no text can stand for: a date (as an ISO string),
 * or an error value (#REF!, also for a formula with no usable result). The
 * reports write it back as what it is, never as text, so that a row the seller
 * has not fixed is invalid again, for the same column, when uploaded again.
 */
export type KeptCell = { date: string } | { error: string };

/** A cell as the reports keep it: the text the seller sees, or a KeptCell. */
export type RawValue = string | KeptCell;

/** A number as the messages write it: 1,000,000. */
export const fmt = (n: number) => n.toLocaleString('en-US');

/** A value quoted for a message: control characters removed, long text cut. */
export function quote(text: string): string {
  return quoteUpTo(text, 40);
}

/** As quote, cut only past `max` characters. */
function quoteUpTo(text: string, max: number): string {
  const clean = stripControls(text);
  return JSON.stringify(clean.length > max ? `${clean.slice(0, max - 3)}...` : clean);
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
    case 'number': return cell.shown ?? String(cell.value);
    case 'bool': return cell.value ? 'TRUE' : 'FALSE';
    case 'date': return '(date)';
    case 'error': return `(${cell.text})`;
  }
}

/** The error values every spreadsheet program opens (and exceljs writes). */
export const ERROR_VALUES: ReadonlySet<string> = new Set(['#N/A', '#REF!', '#NAME?', '#DIV/0!', '#NULL!', '#VALUE!', '#NUM!']);

/**
 * A cell as the reports keep it. An error that is not one of ERROR_VALUES, or
 * whose value is unknown (a formula with no saved result, or whose error the
 * reader does not keep), is kept as #N/A; a date too far out to be one, as #NUM!.
 */
export function keptValue(cell: SheetCell | undefined): RawValue {
  if (cell?.kind === 'date') return Number.isNaN(cell.value.getTime()) ? { error: '#NUM!' } : { date: cell.value.toISOString() };
  if (cell?.kind === 'error') return { error: cell.code !== undefined && ERROR_VALUES.has(cell.code) ? cell.code : '#N/A' };
  return displayText(cell);
}

/** A cell read: its value, or why the row cannot use it. */
export type Check<T> = { ok: true; value: T | undefined } | { ok: false; message: string };

function readText(field: Field, cell: SheetCell | undefined): Check<string> {
  const { min, max } = TEXT_LIMITS[field]!;
  if (!cell || isEmptyCell(cell)) {
    return min > 0 ? { ok: false, message: `${field} is required` } : { ok: true, value: undefined };
  }
  if (cell.kind === 'date') return { ok: false, message: `${field} holds a date; dates are not valid values, type the text instead` };
  if (cell.kind === 'error') return { ok: false, message: `${field} holds ${cell.text}` };
  // trimmed, nothing more (excel-format.md): "W  2" and "W 2" are two SKUs, and the duplicate check compares what is sent
  const text = stripControls(displayText(cell)).trim();
  if (text.length < min) return { ok: false, message: `${field} is required` };
  if ([...text].length > max) return { ok: false, message: `${field} must be at most ${fmt(max)} characters (got ${fmt([...text].length)})` };
  return { ok: true, value: text === '' ? undefined : text };
}

/**
 * A number written with thousands separators (a comma or a space): 1-3 digits,
 * then groups of exactly 3 ("12,000", "1,234,567", "12 000").
 */
const WELL_GROUPED = /^[+-]?\d{1,3}([,\s]\d{3})+(\.\d+)?$/;

/**
 * Full-width forms (U+FF01-U+FF5E) as the ASCII characters they show, and the
 * ideographic space as a space: a Korean IME in full-width mode types "１２，０００",
 * which Excel shows as 12,000 in a wider font; the seller means that number.
 */
function halfWidth(text: string): string {
  return text.replace(/[\uff01-\uff5e]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0)).replace(/\u3000/g, ' ');
}

/**
 * A number with a currency sign or a unit before or after it ("₩12,000",
 * "12,000원", "$12", "KRW 12000", "3개"): the sign or unit is group 1 or 3.
 */
const CURRENCY_OR_UNIT = /^([^\d\s+.,-][^\d]{0,4}?)?\s*([+-]?\d[\d,.\s]*)\s*([^\d\s.,][^\d]{0,4})?$/u;

/**
 * A number grouped with dots and nothing else ("12.000", "1.234.567"): in Korea
 * and much of Europe the dot separates thousands, elsewhere it is a decimal
 * point, so which number the seller means cannot be told. A leading 0
 * ("0.500") or 4 digits before the dot ("1234.000") are not thousands: decimals.
 */
const DOT_GROUPED = /^[+-]?[1-9]\d{0,2}(\.\d{3})+$/;

/**
 * `n`, or the whole number it is within floating-point noise of: a formula
 * such as `=12000*1.1` saves 13200.000000000002, which the seller sees as 13200.
 */
export function nearWhole(n: number): number {
  const whole = Math.round(n);
  return Math.abs(n - whole) <= Math.max(1e-9, Math.abs(whole) * 1e-12) ? whole : n;
}

function readWhole(field: Field, cell: SheetCell | undefined): Check<number> {
  const { min, max } = WHOLE_LIMITS[field]!;
  // built only for a message: formatting a number first loads ICU's data (about 30 ms)
  const rule = () => `${field} must be a whole number from ${fmt(min)} to ${fmt(max)}`;
  if (!cell || isEmptyCell(cell)) return { ok: false, message: `${field} is required` };
  if (cell.kind === 'date') return { ok: false, message: `${field} holds a date; dates are not valid values` };
  if (cell.kind === 'error') return { ok: false, message: `${field} holds ${cell.text}` };
  let n: number;
  if (cell.kind === 'number') {
    n = cell.value;
  } else if (cell.kind === 'text') {
    const text = halfWidth(cell.text).trim();
    const affix = CURRENCY_OR_UNIT.exec(text);
    const signs = affix ? [affix[1], affix[3]].filter((a) => a !== undefined) : [];
    if (signs.length > 0) {
      return { ok: false, message: `${rule()} (got ${quote(text)}); remove the currency sign or unit (${signs.map(quote).join(' and ')}) and type the number only` };
    }
    if (DOT_GROUPED.test(text)) {
      const digits = text.replace(/\./g, '');
      const dots = text.indexOf('.') === text.lastIndexOf('.') ? 'the dot separates' : 'the dots separate';
      return { ok: false, message: `${rule()} (got ${quote(text)}); a dot between digit groups is a thousands separator in some countries and a decimal point in others: type the digits only (${digits} if ${dots} thousands)` };
    }
    const plain = text.replace(/[,\s]/g, '');
    if (!/^[+-]?\d+(\.\d+)?$/.test(plain)) return { ok: false, message: `${rule()} (got ${quote(text)})` };
    if (plain !== text && !WELL_GROUPED.test(text)) {
      return { ok: false, message: `${rule()} (got ${quote(text)}); a decimal comma or a misplaced thousands separator is not accepted: type the number without separators` };
    }
    n = Number(plain);
  } else {
    return { ok: false, message: `${rule()} (got ${displayText(cell)})` };
  }
  n = nearWhole(n);
  if (!Number.isInteger(n)) return { ok: false, message: `${rule()}; ${n} is not a whole number` };
  if (n < min || n > max) return { ok: false, message: `${rule()} (got ${fmt(n)})` };
  return { ok: true, value: n };
}

/** The longest image URL taken, in UTF-16 code units. */
const MAX_URL_CHARS = 2048;

function readUrl(field: Field, cell: SheetCell | undefined): Check<string> {
  if (!cell || isEmptyCell(cell)) return { ok: true, value: undefined };
  if (cell.kind !== 'text') return { ok: false, message: `${field} must be an http or https URL (got ${quote(displayText(cell))})` };
  const text = stripControls(cell.text).trim();
  try {
    const url = new URL(text);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && text.length <= MAX_URL_CHARS) {
      return { ok: true, value: text };
    }
  } catch {
    // reported below
  }
  if (text.length > MAX_URL_CHARS) return { ok: false, message: `${field} must be at most ${fmt(MAX_URL_CHARS)} characters (got ${fmt(text.length)})` };
  // a hyperlink whose shown text is not its address: the cell's text is what is read (excel-format.md),
  // and the address is quoted whole up to a long URL's length, for the seller to copy
  const link = cell.link === undefined ? '' : stripControls(cell.link).trim();
  if (link !== '' && link !== text) {
    return { ok: false, message: `${field} must be an http or https URL (got ${quote(text)}, a link to ${quoteUpTo(link, 200)}: type the address itself in the cell)` };
  }
  return { ok: false, message: `${field} must be an http or https URL (got ${quote(text)})` };
}

/** One of our fields' cells: its value (undefined: left empty), or the sentence that refuses it. */
export function readField(field: Field, cell: SheetCell | undefined): Check<string | number> {
  if (field in WHOLE_LIMITS) return readWhole(field, cell);
  if (field === 'imageUrl') return readUrl(field, cell);
  return readText(field, cell);
}

/** An extra column's cell: its text for the adapter, or why the row cannot use it. */
export function readExtra(header: string, cell: SheetCell | undefined): Check<string> {
  if (!cell || isEmptyCell(cell)) return { ok: true, value: undefined };
  if (cell.kind === 'date') return { ok: false, message: `${quote(header)} holds a date; dates are not valid values, type the text instead` };
  if (cell.kind === 'error') return { ok: false, message: `${quote(header)} holds ${cell.text}` };
  const text = stripControls(displayText(cell)).trim();
  return { ok: true, value: text === '' ? undefined : text };
}
