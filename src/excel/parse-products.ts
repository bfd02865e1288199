/**
 * The sheet's rules (excel-format.md), pure: header cells and rows in,
 * products, the other columns' values (attributes), row errors and warnings
 * out, each cell read by cell-rules.ts. No I/O.
 */
import { displayText, fmt, keptValue, quote, readExtra, readField, stripControls, type RawValue } from './cell-rules.js';
import { UploadRejected } from './errors.js';
import {
  FIELDS, MAX_PRODUCT_ROWS, REQUIRED, TEMPLATE_EXAMPLE, fieldForHeader, isReportColumn, isTemplateExample, type Field, type Product,
} from './fields.js';
import { isEmptyCell, type MergedRange, type SheetCell, type SheetData, type SheetRow } from './sheet-cell.js';

export interface RowError {
  /** The spreadsheet's own row number (header = 1). */
  row: number;
  /** The field's name, as in excel-format.md; for another column, its header as written. */
  column: string;
  message: string;
}

export interface ParsedRow {
  row: number;
  product: Product;
  /**
   * The marketplace's own columns (marketplace.md `attributes`): header as
   * written -> the cell's text, trimmed; empty cells left out.
   */
  attributes: Record<string, string>;
}

/** One column read from the sheet: one of our fields, or (no `field`) an extra column. */
export interface SheetColumn {
  /** The header as written: trimmed, control characters removed. */
  header: string;
  field?: Field;
}

/** One non-empty row as the seller wrote it, for reports. */
export interface RawRow {
  row: number;
  values: Partial<Record<Field, RawValue>>;
  /** The extra columns' non-empty cells, by header. */
  extra: Record<string, RawValue>;
}

export interface ParsedSheet {
  /** Product rows read (non-empty rows after the header; the template's example, left in, not counted). */
  rows: number;
  valid: ParsedRow[];
  errors: RowError[];
  warnings: string[];
  /** Every non-empty row as the seller wrote it, for reports. */
  raw: RawRow[];
  /**
   * The columns read, in the sheet's order: our fields and the extra columns.
   * Left out: blank headers, a repeated alias of a field (not read), and the
   * failed-only file's reason column.
   */
  columns: SheetColumn[];
  /** The extra columns' headers, in the sheet's order. */
  extraColumns: string[];
}

/** True for the template's example row, left in: its SKU, name and image read as the example's. */
function isExampleRow(cells: SheetCell[], columns: ReadonlyMap<Field, number>): boolean {
  const value = (field: Field) => {
    const index = columns.get(field);
    const check = readField(field, index === undefined ? undefined : cells[index]);
    return check.ok ? check.value : undefined;
  };
  return isTemplateExample({ sku: value('sku') as string | undefined, name: value('name') as string | undefined, imageUrl: value('imageUrl') as string | undefined });
}

/** A 0-based column index as the spreadsheet names it: 0 -> A, 26 -> AA. */
export function columnLetter(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    out = String.fromCharCode(65 + r) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/**
 * The one warning `upload` (and the console) gives about the extra columns
 * when the workers use the built-in adapter, which sends none of them;
 * undefined when there is nothing to say.
 */
export function extraColumnsWarning(extraColumns: readonly string[], builtinAdapter: boolean): string | undefined {
  if (!builtinAdapter || extraColumns.length === 0) return undefined;
  const many = extraColumns.length > 1;
  const names = extraColumns.slice(0, 20).map(quote).join(', ') + (extraColumns.length > 20 ? ` and ${extraColumns.length - 20} more` : '');
  return `column${many ? 's' : ''} ${names} ${many ? 'are' : 'is'} kept in the reports but not sent: the built-in adapter sends only the fields of the template (${FIELDS.join(', ')}); set REGISTRATION_ADAPTER to send ${many ? 'them' : 'it'}.`;
}

/** Values under a column with no header in row 1 were not read: which column, and where. */
export function unheadedWarning(index: number, rows: number[]): string {
  const shown = rows.slice(0, 3).join(', ');
  const more = rows.length > 3 ? ` and ${rows.length - 3} more` : '';
  return `column ${columnLetter(index)} has no header in row 1, so its values (row${rows.length > 1 ? 's' : ''} ${shown}${more}) were not read: give it a header to send them to the marketplace, or clear it.`;
}

/** A range as the spreadsheet writes it: "D2:D5". */
const rangeText = (m: MergedRange) => `${columnLetter(m.left)}${m.top}:${columnLetter(m.right)}${m.bottom}`;

/** The ranges named in a message: the first three, then how many more. */
function rangesText(ranges: MergedRange[]): string {
  return ranges.slice(0, 3).map(rangeText).join(', ') + (ranges.length > 3 ? ` and ${ranges.length - 3} more` : '');
}

/**
 * Merged cells as a seller means them. A spreadsheet keeps a merged range's value
 * in its top-left cell and shows it across the range; a seller who merges a
 * column's cells over several products (one category, one brand) means that
 * value for each of them. So each product row the range spans takes its value in
 * the range's first column, where its own cell is empty. A range's other columns
 * are other fields, which the value is not meant for: their cells stay empty, and
 * a required one says why (`within`). Ranges in the header row are left alone.
 * Pure: the rows are copied where they change.
 * @returns the rows, the ranges whose value was given to rows below them, and the
 *   range a cell (row, 0-based column) lies in beyond the range's first column
 */
export function spreadMerged(rows: SheetRow[], merged: MergedRange[]): { rows: SheetRow[]; spread: MergedRange[]; within: (row: number, column: number) => MergedRange | undefined } {
  const ranges = merged.filter((m) => m.top >= 2);
  // a range may claim a million rows: only the rows read are visited, and no map per cell is made
  const within = (row: number, column: number) => ranges.find((m) => row >= m.top && row <= m.bottom && column > m.left && column <= m.right);
  if (ranges.length === 0) return { rows, spread: [], within };
  const out = [...rows];
  // the rows are in sheet order: the first one at or after `row`
  const from = (row: number) => {
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (out[mid]!.row < row) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const spread: MergedRange[] = [];
  for (const m of ranges) {
    const top = from(m.top);
    const value = out[top]?.row === m.top ? out[top]!.cells[m.left] : undefined;
    if (value === undefined || isEmptyCell(value)) continue;
    let gave = false;
    // rows with nothing of their own are empty rows, skipped wherever they stand: not in `out`
    for (let i = top + 1; i < out.length && out[i]!.row <= m.bottom; i++) {
      if (!isEmptyCell(out[i]!.cells[m.left])) continue;
      const cells = [...out[i]!.cells];
      cells[m.left] = value;
      out[i] = { row: out[i]!.row, cells };
      gave = true;
    }
    if (gave) spread.push(m);
  }
  return { rows: out, spread, within };
}

/** The warning for merged ranges whose value was given to the rows below their top cell. */
export function mergedWarning(spread: MergedRange[]): string {
  const one = spread.length === 1 ? spread[0]! : undefined;
  return one
    ? `cells ${rangeText(one)} are merged: the value in ${columnLetter(one.left)}${one.top} was used for every product row they span.`
    : `cells ${rangesText(spread)} are merged: the value in each range's top cell was used for every product row it spans.`;
}

/**
 * Applies every rule of excel-format.md.
 * @throws UploadRejected for whole-file problems (missing column, two columns
 *   with the same header, no products, too many rows).
 */
export function parseProducts(sheet: SheetData): ParsedSheet {
  // how messages name the sheet: a CSV file is its own one sheet
  const where = sheet.sheetName === undefined ? 'the file' : 'the sheet';
  const columns = new Map<Field, number>();
  const warnings: string[] = [];
  const layout: SheetColumn[] = [];
  const extras: Array<{ header: string; index: number }> = [];
  // header text compared ignoring case and surrounding spaces -> its column
  const headed = new Map<string, number>();
  // columns with no header: nothing in them is read, and a value found there is said so
  const unheaded = new Set<number>();
  sheet.header.forEach((cell, index) => {
    const text = stripControls(displayText(cell)).trim();
    if (text === '') unheaded.add(index);
    if (text === '' || isReportColumn(text)) return;
    const key = text.normalize('NFC').toLowerCase();
    const earlier = headed.get(key);
    if (earlier !== undefined) {
      throw new UploadRejected(
        `${where} has two columns headed ${quote(text)} (columns ${columnLetter(earlier)} and ${columnLetter(index)}): remove one or give it another header, and upload again.`,
      );
    }
    headed.set(key, index);
    const field = fieldForHeader(text);
    if (!field) {
      extras.push({ header: text, index });
      layout.push({ header: text });
    } else if (columns.has(field)) {
      warnings.push(`column ${quote(text)} repeats the ${field} column; only the first one is read.`);
    } else {
      columns.set(field, index);
      layout.push({ header: text, field });
    }
  });
  const missing = REQUIRED.filter((f) => !columns.has(f));
  if (missing.length > 0) {
    const names = missing.map((f) => `"${f}"`).join(', ');
    // a header merged over two columns leaves the second without one
    const mergedHeaders = (sheet.merged ?? []).filter((m) => m.top === 1 && m.right > m.left);
    const unmerge = mergedHeaders.length > 0 ? ` Row 1 has merged cells (${rangesText(mergedHeaders)}): unmerge them so that each column has its own header.` : '';
    throw new UploadRejected(
      `${sheet.sheetName === undefined ? where : `${where} "${stripControls(sheet.sheetName)}"`} has no ${names} column${missing.length > 1 ? 's' : ''} in row 1: add the header${missing.length > 1 ? 's' : ''} (see the template) and upload again.${unmerge}`,
    );
  }

  const { rows: productRows, spread, within } = spreadMerged(sheet.rows, sheet.merged ?? []);
  // the template's example row, left in: not a product of the seller's (fields.ts), nor counted toward the limit
  const exampleRows = new Set(productRows.filter(({ cells }) => isExampleRow(cells, columns)).map((r) => r.row));
  const products = productRows.length - exampleRows.size;
  if (sheet.overLimit || products > MAX_PRODUCT_ROWS) {
    // reading stopped after twice the limit: what was read is over it, whatever examples it held
    const count = sheet.overLimit ? `more than ${fmt(Math.max(products - 1, MAX_PRODUCT_ROWS))}` : fmt(products);
    throw new UploadRejected(
      `the file has ${count} product rows; at most ${fmt(MAX_PRODUCT_ROWS)} are allowed: split it into several files.`,
    );
  }
  if (productRows.length === 0) throw new UploadRejected(`no products found: ${where} has a header row but no product rows.`);

  const valid: ParsedRow[] = [];
  const errors: RowError[] = [];
  const raw: ParsedSheet['raw'] = [];
  const firstSeen = new Map<string, number>();
  const examples: number[] = [];
  // rows with a value under a column with no header, by column
  const unread = new Map<number, number[]>();
  for (const { row, cells } of productRows) {
    if (exampleRows.has(row)) {
      examples.push(row);
      continue;
    }
    const values: Partial<Record<Field, RawValue>> = {};
    const product: Record<string, string | number> = {};
    let rowOk = true;
    for (const field of FIELDS) {
      const index = columns.get(field);
      const cell = index === undefined ? undefined : cells[index];
      if (index !== undefined) values[field] = keptValue(cell);
      if (index === undefined && !REQUIRED.includes(field)) continue;
      const check = readField(field, cell);
      if (!check.ok) {
        const range = index !== undefined && isEmptyCell(cell) ? within(row, index) : undefined;
        const hint = range && ` (${columnLetter(index!)}${row} is part of the merged cells ${rangeText(range)}, whose one value is in ${columnLetter(range.left)}${range.top}: unmerge them and type the value in each cell)`;
        errors.push({ row, column: field, message: check.message + (hint ?? '') });
        rowOk = false;
      } else if (check.value !== undefined) {
        product[field] = check.value;
      }
    }
    cells.forEach((cell, index) => {
      if ((index >= sheet.header.length || unheaded.has(index)) && !isEmptyCell(cell)) unread.set(index, [...(unread.get(index) ?? []), row]);
    });
    const extra: Record<string, RawValue> = {};
    const attributes: Record<string, string> = {};
    for (const { header, index } of extras) {
      const cell = cells[index];
      if (isEmptyCell(cell)) continue;
      extra[header] = keptValue(cell);
      const check = readExtra(header, cell);
      if (!check.ok) {
        errors.push({ row, column: header, message: check.message });
        rowOk = false;
      } else if (check.value !== undefined) {
        attributes[header] = check.value;
      }
    }
    raw.push({ row, values, extra });
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
    if (rowOk) valid.push({ row, product: product as unknown as Product, attributes });
  }
  if (spread.length > 0) warnings.push(mergedWarning(spread));
  for (const [index, rows] of [...unread].sort(([a], [b]) => a - b)) warnings.push(unheadedWarning(index, rows));
  if (examples.length > 0) {
    const rowsText = `row${examples.length > 1 ? 's' : ''} ${examples.join(', ')}`;
    if (raw.length === 0) throw new UploadRejected(`no products found: ${where} holds only the template's example (${rowsText}, ${TEMPLATE_EXAMPLE.sku}): replace it with your products and upload again.`);
    warnings.push(`${rowsText} ${examples.length > 1 ? 'are' : 'is'} the template's example (${TEMPLATE_EXAMPLE.sku}): not registered.`);
  }
  return { rows: raw.length, valid, errors, warnings, raw, columns: layout, extraColumns: extras.map((e) => e.header) };
}
