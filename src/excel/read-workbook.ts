/**
 * exceljs I/O: streams the chosen worksheet of an .xlsx and turns its cells into
 * SheetCells. Reading stops as soon as the sheet shows more product rows than
 * allowed, so a huge sheet is never read to its end. What the reader skips or
 * misreads is then read from the sheet's own part (sheet-part.ts).
 */
// Only the streaming reader and the enums, not the package's root: the root loads the
// writer and the CSV and archive modules too, about 100 ms of every upload's start.
import WorkbookReader from 'exceljs/lib/stream/xlsx/workbook-reader.js';
import enums from 'exceljs/lib/doc/enums.js';
import utils from 'exceljs/lib/utils/utils.js';
import tmp from 'tmp';
import { UploadRejected } from './errors.js';
import { EMPTY, isEmptyCell, type SheetCell, type SheetData, type SheetRow } from './sheet-cell.js';
import { HeldTailStream } from './held-tail-stream.js';
import { booleanFormulaCells, hyperlinks, inlineRichTexts, mergedRanges, partXml, relsPartOf, type Hyperlink } from './sheet-part.js';
import { centralDirectoryOffset, readZipDirectory, type ZipEntry } from './zip-directory.js';

export const SHEET_NAMES = ['products', '상품'];
/** Columns past this one are never read (the sheet's fields sit well before it). */
export const MAX_COLUMNS = 200;
/** A cell's text beyond this is cut (no field allows more than 5,000 characters). */
export const MAX_CELL_CHARS = 32_767;

// exceljs spools worksheets that precede the shared strings to temporary files;
// reading stops early, so let those files be removed when the process exits.
tmp.setGracefulCleanup();

interface SheetInfo {
  name: string;
  state?: string;
}

type ReaderWithModel = { model?: { sheets?: SheetInfo[] }; properties?: { model?: { date1904?: boolean } } };

/** The reader's parsing of xl/_rels/workbook.xml.rels, and the relationships it keeps. */
type RelsReader = { _parseRels(entry: unknown): Promise<void>; workbookRels?: Array<{ Target?: string }> };

/**
 * exceljs's stream reader names a worksheet from the workbook's relationship
 * whose target is its part written relative to xl/ ("worksheets/sheet1.xml").
 * openpyxl, and so pandas, writes the targets absolute ("/xl/worksheets/sheet1.xml"):
 * the reader then calls every sheet Sheet1, Sheet2... with no state, and the
 * products sheet is not found by its name. The targets are made relative as
 * they are read.
 */
function acceptAbsoluteTargets(reader: unknown): void {
  const rels = reader as RelsReader;
  const parse = rels._parseRels.bind(reader);
  rels._parseRels = async (entry) => {
    await parse(entry);
    for (const rel of rels.workbookRels ?? []) rel.Target = rel.Target?.replace(/^\/xl\//, '');
  };
}

/** The reader's start of a worksheet read from the part xl/worksheets/sheet{sheetNo}.xml. */
type WorksheetsReader = { _parseWorksheet(iterator: unknown, sheetNo: string): Generator<{ value: { part?: string } }> };

/**
 * The reader gives a worksheet the id it has in workbook.xml, which need not be
 * its part's number: Excel keeps a sheet's id when a sheet before it is deleted.
 * The part each worksheet was read from is kept as its `part`, where what the
 * reader skips is read afterwards.
 */
function notePart(reader: unknown): void {
  const sheets = reader as WorksheetsReader;
  const parse = sheets._parseWorksheet.bind(reader);
  sheets._parseWorksheet = function* (iterator, sheetNo) {
    for (const event of parse(iterator, sheetNo)) {
      event.value.part = `xl/worksheets/sheet${sheetNo}.xml`;
      yield event;
    }
  };
}

function pickSheet(sheets: SheetInfo[]): string | undefined {
  const named = sheets.find((s) => SHEET_NAMES.includes(s.name.trim().toLowerCase()));
  if (named) return named.name;
  return sheets.find((s) => s.state !== 'hidden' && s.state !== 'veryHidden')?.name;
}

function textOf(value: string): SheetCell {
  return { kind: 'text', text: value.length > MAX_CELL_CHARS ? value.slice(0, MAX_CELL_CHARS) : value };
}

/** exceljs cell value -> SheetCell. */
export function toSheetCell(value: unknown): SheetCell {
  if (value === null || value === undefined) return EMPTY;
  if (typeof value === 'string') return textOf(value);
  if (typeof value === 'number') return Number.isFinite(value) ? { kind: 'number', value } : { kind: 'error', text: 'not a number' };
  if (typeof value === 'boolean') return { kind: 'bool', value };
  if (value instanceof Date) return { kind: 'date', value };
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v.richText)) {
      return textOf(v.richText.map((run: { text?: unknown }) => String(run?.text ?? '')).join(''));
    }
    if ('formula' in v || 'sharedFormula' in v) return formulaCell(v.result);
    if ('error' in v) return { kind: 'error', text: `the error ${String(v.error)}`, code: String(v.error) };
    if ('text' in v || 'hyperlink' in v) {
      const text = toSheetCell(v.text);
      if (typeof v.hyperlink !== 'string') return text;
      if (isEmptyCell(text)) return textOf(v.hyperlink);
      return text.kind === 'text' ? { ...text, link: v.hyperlink } : text;
    }
  }
  return { kind: 'error', text: 'a value that cannot be read' };
}

/**
 * A formula cell's saved result -> SheetCell. An empty-string result (a
 * template's `=IF(Z5="","",Z5)` dragged down) is an empty cell; no result at
 * all is an error for the cell.
 */
export function formulaCell(result: unknown): SheetCell {
  // exceljs's stream reader keeps no error text: a saved #DIV/0! or #REF! arrives as NaN.
  if (result === undefined) return { kind: 'error', text: 'a formula with no saved result (an error, or never calculated): type the value instead' };
  if (result === '') return EMPTY;
  if (typeof result === 'number' && Number.isNaN(result)) return { kind: 'error', text: 'a formula whose result is an error: fix the formula or type the value instead' };
  if (result !== null && typeof result === 'object' && 'error' in result) {
    const code = String((result as { error: unknown }).error);
    return { kind: 'error', text: `a formula whose result is ${code}: fix the formula or type the value instead`, code };
  }
  return toSheetCell(result);
}

/** The part of an exceljs stream cell that is read. */
interface StreamCell {
  type: number;
  value: unknown;
  result?: unknown;
  numFmt?: string;
}

/** The part of an exceljs stream row that is read. */
interface StreamRow {
  number: number;
  eachCell(iteratee: (cell: StreamCell, col: number) => void): void;
}

/**
 * A formula cell's saved result. The reader reads a typed number in a cell
 * formatted as a date as that date, but a formula's result as a number
 * whatever the format: a date the formula shows (`=F2+30`) would be read as
 * 46024. It is read as the date, the same way.
 */
function formulaResult(cell: StreamCell, date1904: boolean): unknown {
  return typeof cell.result === 'number' && Number.isFinite(cell.result) && utils.isDateFmt(cell.numFmt)
    ? utils.excelToDate(cell.result, date1904)
    : cell.result;
}

/**
 * The header and the rows read, with the cells found in the sheet's part replaced by what
 * `replace` makes of each (undefined: kept as read). A row skipped as empty stays skipped.
 */
function replaceFound<T extends { row: number; col: number }>(header: SheetCell[], rows: SheetRow[], found: T[], replace: (cell: SheetCell | undefined, at: T) => SheetCell | undefined): void {
  if (found.length === 0) return;
  const byNumber = new Map(rows.map((r) => [r.row, r.cells]));
  for (const at of found) {
    const cells = at.row === 1 ? header : byNumber.get(at.row);
    if (!cells || at.col >= MAX_COLUMNS) continue;
    const cell = replace(cells[at.col], at);
    if (cell === undefined) continue;
    for (let i = cells.length; i < at.col; i++) cells[i] = EMPTY;
    cells[at.col] = cell;
  }
}

/**
 * The empty cells of the rows read that a hyperlink covers take its target
 * (excel-format.md); not the header's, which name columns. A cell that shows
 * text of its own keeps it, and notes the target for a message that refuses
 * the text (an imageUrl cell showing "photo"). At most as many cells are
 * visited as the rows can hold, however many links cover them.
 */
function fillFromLinks(rows: SheetRow[], links: Hyperlink[]): void {
  let visits = rows.length * MAX_COLUMNS;
  for (const link of links) {
    for (const { row, cells } of rows) {
      if (row < link.top) continue;
      if (row > link.bottom) break;
      for (let col = link.left; col <= Math.min(link.right, MAX_COLUMNS - 1); col++) {
        if (--visits < 0) return;
        const shown = cells[col];
        if (!isEmptyCell(shown)) {
          if (shown?.kind === 'text' && shown.link === undefined) cells[col] = { ...shown, link: link.target };
          continue;
        }
        for (let i = cells.length; i < col; i++) cells[i] = EMPTY;
        cells[col] = textOf(link.target);
      }
    }
  }
}

/**
 * A number as a format made only of zeros shows it: "00000" shows 12 as 00012
 * (a SKU or a category code typed as a number). Other formats, negative and
 * fractional numbers: undefined, and the number's own text is used.
 */
export function zeroPadded(value: number, numFmt: string | undefined): string | undefined {
  if (numFmt === undefined || !/^0+$/.test(numFmt) || !Number.isSafeInteger(value) || value < 0) return undefined;
  return String(value).padStart(numFmt.length, '0');
}

function rowCells(row: StreamRow, date1904: boolean): SheetCell[] {
  const out: SheetCell[] = [];
  // A formula cell's `value` drops a falsy result ('', 0, FALSE); its `result` keeps it.
  row.eachCell((cell, col) => {
    if (col > MAX_COLUMNS) return;
    const read = cell.type === enums.ValueType.Formula ? formulaCell(formulaResult(cell, date1904)) : toSheetCell(cell.value);
    const shown = read.kind === 'number' ? zeroPadded(read.value, cell.numFmt) : undefined;
    out[col - 1] = read.kind === 'number' && shown !== undefined ? { ...read, shown } : read;
  });
  for (let i = 0; i < out.length; i++) out[i] ??= EMPTY;
  return out;
}

/** A workbook that cannot be read to its end. */
const DAMAGED = 'the workbook is damaged or incomplete and cannot be read: open it in Excel, save it as .xlsx again and upload the new file.';

/**
 * Reads the products sheet: the one named `products` or `상품` (any case), else
 * the first visible worksheet.
 * @param stopAfter reading stops at the first non-empty row past this many (so a
 *   sheet just over the limit is counted exactly, and a huge one is not read to its end).
 * @param entries the zip's directory, as sniffFile read it (read again when not given).
 * @throws UploadRejected when the workbook cannot be read or has no usable sheet.
 */
export async function readWorkbook(bytes: Buffer, stopAfter: number, entries: ZipEntry[] = readZipDirectory(bytes) ?? []): Promise<SheetData> {
  const input = new HeldTailStream(bytes, centralDirectoryOffset(bytes), entries.length);
  const reader = new WorkbookReader(input, {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    worksheets: 'emit',
    entries: 'ignore',
  });
  acceptAbsoluteTargets(reader);
  notePart(reader);
  let target: string | undefined;
  let firstSeen: string | undefined;
  try {
    for await (const worksheet of reader) {
      const ws = worksheet as unknown as { name?: string; state?: string; part?: string } & AsyncIterable<StreamRow>;
      const book = reader as unknown as ReaderWithModel;
      const sheets = book.model?.sheets;
      target ??= sheets && sheets.length > 0 ? pickSheet(sheets) : undefined;
      const name = ws.name ?? '';
      firstSeen ??= name;
      const wanted = target !== undefined ? name === target : ws.state !== 'hidden' && ws.state !== 'veryHidden';
      if (!wanted) {
        // Open and close it at once: exceljs may have spooled it to a temporary file.
        for await (const _ of ws) break;
        continue;
      }

      let header: SheetCell[] | undefined;
      const rows: SheetRow[] = [];
      let overLimit = false;
      const date1904 = book.properties?.model?.date1904 === true;
      for await (const row of ws) {
        const cells = rowCells(row, date1904);
        if (row.number === 1) {
          header = cells;
          continue;
        }
        if (header === undefined) header = [];
        if (cells.every(isEmptyCell)) continue;
        rows.push({ row: row.number, cells });
        if (rows.length > stopAfter) {
          overLimit = true;
          break;
        }
      }
      header ??= [];
      // a sheet over the limit is rejected whatever its cells hold: its part is not read again
      const part = overLimit ? undefined : ws.part;
      const xml = part === undefined ? undefined : partXml(bytes, entries, part);
      // a sheet's XML cut short inside a sound zip (a part written by a tool that stopped): the
      // stream reader ends at the cut without a word, and the rows after it would be lost
      if (xml !== undefined && !/<\/(?:[\w.-]+:)?worksheet>\s*$/.test(xml.slice(-200))) throw new UploadRejected(DAMAGED);
      const merged = xml === undefined ? [] : mergedRanges(xml);
      if (part !== undefined && xml !== undefined) {
        replaceFound(header, rows, inlineRichTexts(xml), (_, { text }) => textOf(text));
        // a formula's TRUE or FALSE, read as a number: read as that TRUE or FALSE
        replaceFound(header, rows, booleanFormulaCells(xml), (cell) => (cell?.kind === 'number' ? { kind: 'bool', value: cell.value !== 0 } : undefined));
        fillFromLinks(rows, hyperlinks(xml, () => partXml(bytes, entries, relsPartOf(part))));
      }
      return { sheetName: name, header, rows, overLimit, ...(merged.length > 0 ? { merged } : {}) };
    }
  } catch (err) {
    if (err instanceof UploadRejected) throw err;
    throw new UploadRejected(DAMAGED);
  } finally {
    input.destroy();
  }
  if (firstSeen === undefined) throw new UploadRejected('the workbook has no worksheet: add a sheet named "products" with the header row.');
  throw new UploadRejected('the workbook has no visible worksheet: unhide the products sheet or name it "products".');
}
