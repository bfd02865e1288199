/**
 * The marketplace's own columns that `template` appends after ours
 * (TEMPLATE_COLUMNS_FILE, or `template --columns`): a JSON array whose
 * entries are a header, or `{ "header": "...", "note": "...", "example": "..." }`.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../config.js';
import { FIELDS, fieldForHeader, isReportColumn } from '../excel/fields.js';
import { stripControls } from '../excel/cell-rules.js';
import { MAX_COLUMNS } from '../excel/read-workbook.js';

export interface TemplateColumn {
  header: string;
  /** Shown in the instructions sheet. */
  note?: string;
  /** Written in the example row. */
  example?: string;
}

/** Upload reads MAX_COLUMNS columns; ours come first. */
export const MAX_TEMPLATE_COLUMNS = MAX_COLUMNS - FIELDS.length;
const MAX_HEADER_CHARS = 100;
const MAX_NOTE_CHARS = 1000;
const KEYS = ['header', 'note', 'example'];
const ENTRY = 'a header, or an object with "header" and optionally "note" and "example", all text';

const shownText = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 37)}...` : text);

/**
 * The columns a file's text describes.
 * @returns the columns, or the reason the text is not a valid list (a phrase, no capital, no period)
 */
export function parseTemplateColumns(json: string): { ok: true; columns: TemplateColumn[] } | { ok: false; reason: string } {
  let list: unknown;
  try {
    list = JSON.parse(json);
  } catch (err) {
    return { ok: false, reason: `it is not JSON (${(err as Error).message.split('\n')[0]!.slice(0, 120)})` };
  }
  const expected = `expected ${ENTRY}`;
  if (!Array.isArray(list)) return { ok: false, reason: `it holds ${list === null ? 'null' : typeof list === 'object' ? 'an object' : `a ${typeof list}`}, not a JSON array of columns, each ${ENTRY}` };
  if (list.length > MAX_TEMPLATE_COLUMNS) return { ok: false, reason: `it lists ${list.length} columns; at most ${MAX_TEMPLATE_COLUMNS} fit after the template's own` };
  const columns: TemplateColumn[] = [];
  const seen = new Map<string, number>();
  for (const [i, entry] of list.entries()) {
    const at = `entry ${i + 1}`;
    let column: TemplateColumn;
    if (typeof entry === 'string') {
      column = { header: entry };
    } else if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
      const e = entry as Record<string, unknown>;
      const unknown = Object.keys(e).filter((k) => !KEYS.includes(k));
      if (unknown.length > 0) return { ok: false, reason: `${at} has ${unknown.map((k) => shownText(k)).join(', ')}: ${expected}` };
      if (typeof e.header !== 'string') return { ok: false, reason: `${at} has no "header" text: ${expected}` };
      for (const k of ['note', 'example'] as const) {
        if (e[k] !== undefined && typeof e[k] !== 'string') return { ok: false, reason: `${at}'s "${k}" is not text: ${expected}` };
      }
      column = {
        header: e.header,
        ...(typeof e.note === 'string' && e.note.trim() !== '' ? { note: stripControls(e.note).trim().slice(0, MAX_NOTE_CHARS) } : {}),
        ...(typeof e.example === 'string' && e.example.trim() !== '' ? { example: stripControls(e.example).trim() } : {}),
      };
    } else {
      const what = entry === null ? 'null' : Array.isArray(entry) ? 'an array' : `a ${typeof entry}`;
      return { ok: false, reason: `${at} is ${what}: ${expected}` };
    }
    const header = stripControls(column.header).trim();
    if (header === '') return { ok: false, reason: `${at} has an empty header` };
    if (header.length > MAX_HEADER_CHARS) return { ok: false, reason: `${at}'s header is ${header.length} characters long; at most ${MAX_HEADER_CHARS}` };
    const field = fieldForHeader(header);
    if (field) return { ok: false, reason: `${at}'s header ${shownText(header)} is the template's own ${field} column` };
    if (isReportColumn(header)) return { ok: false, reason: `${at}'s header ${shownText(header)} is the column the failed-only report adds` };
    const key = header.normalize('NFC').toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) return { ok: false, reason: `entries ${first} and ${i + 1} have the same header ${shownText(header)}` };
    seen.set(key, i + 1);
    columns.push({ ...column, header });
  }
  return { ok: true, columns };
}

/**
 * Reads the columns file.
 * @param source how the file was named, for the message: the variable or the flag
 * @throws ConfigError with one sentence naming the source, the file and what is wrong
 */
export async function loadTemplateColumns(path: string, source: 'TEMPLATE_COLUMNS_FILE' | '--columns', cwd = process.cwd()): Promise<TemplateColumn[]> {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  const shown = source === '--columns' ? `--columns ${JSON.stringify(path)}` : `TEMPLATE_COLUMNS_FILE=${JSON.stringify(path)}`;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder, not a file' : `it cannot be read (${code ?? 'unknown error'})`;
    throw new ConfigError(`${shown} is invalid: ${why} (${file}).`);
  }
  const parsed = parseTemplateColumns(text.replace(/^\uFEFF/, ''));
  if (!parsed.ok) throw new ConfigError(`${shown} is invalid: ${parsed.reason} (${file}).`);
  return parsed.columns;
}
