/**
 * CSV input beside .xlsx: UTF-8 with or without a BOM, UTF-16 with a BOM (as
 * Excel's "Unicode Text" writes it), or CP949/EUC-KR as Korean Excel writes it,
 * detected automatically; cells separated by commas, semicolons or tabs. Every
 * cell is text; the same rules apply afterwards as for .xlsx.
 */
import { UploadRejected } from './errors.js';
import { EMPTY, type SheetCell, type SheetData, type SheetRow } from './sheet-cell.js';
import { MAX_CELL_CHARS } from './read-workbook.js';

/**
 * Bytes -> text: a UTF-8 BOM or valid UTF-8 is UTF-8; a UTF-16 BOM (FF FE or
 * FE FF) is UTF-16 LE or BE; anything else is read as CP949 (EUC-KR).
 */
export function decodeCsv(bytes: Buffer): { text: string; encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'cp949' } {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return { text: new TextDecoder('utf-8').decode(bytes.subarray(3)), encoding: 'utf-8' };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf-16le' };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf-16be' };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('euc-kr').decode(bytes), encoding: 'cp949' };
  }
}

/** The separator the header line uses most: comma, semicolon or tab (comma when it holds none). */
export function detectDelimiter(firstLine: string): string {
  const counts = [',', ';', '\t'].map((d) => [d, firstLine.split(d).length] as const);
  counts.sort((a, b) => b[1] - a[1]);
  return counts[0]![1] > 1 ? counts[0]![0] : ',';
}

/**
 * RFC 4180 records (quoted fields, doubled quotes, CRLF or LF).
 * @throws UploadRejected naming the line where a quoted value starts when it is
 *   never closed, or when it runs over line breaks and its closing quote is
 *   followed by more text: either way the lines after it would be swallowed into one cell.
 */
export function* csvRecords(text: string, delimiter: string): Generator<string[]> {
  let field = '';
  let record: string[] = [];
  let quoted = false;
  // the text editor's line number (1-based) of `i`, and of the quote that opened the current value
  let line = 1;
  let quoteLine = 0;
  let closedAcrossLines = false;
  const unbalanced = (reason: string) =>
    new UploadRejected(`the file has a quoted value starting on line ${quoteLine} that ${reason}: check the quotes on line ${quoteLine} (write "" for a quote inside a value) and upload again.`);
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) line++;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') { field += '"'; i++; } else {
          quoted = false;
          closedAcrossLines = line > quoteLine;
        }
      } else if (field.length < MAX_CELL_CHARS) field += ch;
    } else if (ch === '"' && field === '') {
      quoted = true;
      quoteLine = line;
    } else if (ch === delimiter) { record.push(field); field = ''; closedAcrossLines = false; }
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') { i++; line++; }
      record.push(field);
      yield record;
      record = [];
      field = '';
      closedAcrossLines = false;
    } else {
      if (closedAcrossLines && ch.trim() !== '') throw unbalanced('runs over several lines and has more text after its closing quote');
      if (field.length < MAX_CELL_CHARS) field += ch;
    }
  }
  if (quoted) throw unbalanced('is never closed');
  if (field !== '' || record.length > 0) { record.push(field); yield record; }
}

const cell = (text: string): SheetCell => (text.trim() === '' ? EMPTY : { kind: 'text', text });

export function readCsv(bytes: Buffer, stopAfter: number): SheetData & { encoding: string } {
  const { text, encoding } = decodeCsv(bytes);
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const delimiter = detectDelimiter(firstLine);
  let header: SheetCell[] = [];
  const rows: SheetRow[] = [];
  let overLimit = false;
  let rowNumber = 0;
  for (const record of csvRecords(text, delimiter)) {
    rowNumber++;
    const cells = record.slice(0, 200).map(cell);
    if (rowNumber === 1) { header = cells; continue; }
    if (cells.every((c) => c.kind === 'empty')) continue;
    rows.push({ row: rowNumber, cells });
    if (rows.length > stopAfter) { overLimit = true; break; }
  }
  return { header, rows, overLimit, encoding };
}
