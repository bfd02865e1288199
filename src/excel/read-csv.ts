/**
 * CSV input beside .xlsx: UTF-8 with or without a BOM, or CP949/EUC-KR as Korean
 * Excel writes it, detected automatically. Every cell is text; the same rules
 * apply afterwards as for .xlsx.
 */
import { EMPTY, type SheetCell, type SheetData, type SheetRow } from './sheet-cell.js';
import { MAX_CELL_CHARS } from './read-workbook.js';

/** Bytes -> text: a UTF-8 BOM or valid UTF-8 is UTF-8; anything else is read as CP949 (EUC-KR). */
export function decodeCsv(bytes: Buffer): { text: string; encoding: 'utf-8' | 'cp949' } {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return { text: new TextDecoder('utf-8').decode(bytes.subarray(3)), encoding: 'utf-8' };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('euc-kr').decode(bytes), encoding: 'cp949' };
  }
}

function detectDelimiter(firstLine: string): string {
  const counts = [',', ';', '\t'].map((d) => [d, firstLine.split(d).length] as const);
  counts.sort((a, b) => b[1] - a[1]);
  return counts[0]![1] > 1 ? counts[0]![0] : ',';
}

/** RFC 4180 records (quoted fields, doubled quotes, CRLF or LF); stops after `maxRecords`. */
export function* csvRecords(text: string, delimiter: string): Generator<string[]> {
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') { field += '"'; i++; } else quoted = false;
      } else if (field.length < MAX_CELL_CHARS) field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === delimiter) { record.push(field); field = ''; }
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      yield record;
      record = [];
      field = '';
    } else if (field.length < MAX_CELL_CHARS) field += ch;
  }
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
  return { sheetName: 'CSV', header, rows, overLimit, encoding };
}
