/**
 * What exceljs's stream reader skips or misreads in a worksheet, read from the
 * sheet's own part (xl/worksheets/sheet{n}.xml) once its rows are read. The
 * part's size was bounded before the workbook was opened (inflate-bound.ts).
 */
import { inflateRawSync } from 'node:zlib';
import type { MergedRange } from './sheet-cell.js';
import { MAX_ENTRY_BYTES } from './sniff-file.js';
import { entryData, type ZipEntry } from './zip-directory.js';

/** Merged ranges, and hyperlinks, read at most: far more than a sheet of 500 products holds. */
export const MAX_MERGED_RANGES = 10_000;
export const MAX_HYPERLINKS = 10_000;

/** A cell's text found in the part: row as the spreadsheet numbers it (header = 1), column 0-based. */
export interface PartText {
  row: number;
  col: number;
  text: string;
}

/** The XML of the part `name`; undefined when it cannot be found or read. */
export function partXml(bytes: Buffer, entries: ZipEntry[], name: string): string | undefined {
  const entry = entries.find((e) => e.name === name);
  const data = entry && entryData(bytes, entry);
  if (!entry || !data) return undefined;
  try {
    return (entry.method === 8 ? inflateRawSync(data, { maxOutputLength: MAX_ENTRY_BYTES }) : data).toString('utf8');
  } catch {
    return undefined;
  }
}

/** A column's letters as a 0-based index: A -> 0, AA -> 26. */
function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** The sheet's merged ranges: the reader skips them (they follow the rows, in <mergeCells>). */
export function mergedRanges(xml: string): MergedRange[] {
  const start = xml.search(/<(?:[\w-]+:)?mergeCells[\s>]/);
  if (start < 0) return [];
  const out: MergedRange[] = [];
  const ref = /<(?:[\w-]+:)?mergeCell\s[^>]*?\bref="\$?([A-Z]{1,3})\$?(\d{1,7}):\$?([A-Z]{1,3})\$?(\d{1,7})"/g;
  ref.lastIndex = start;
  for (let m = ref.exec(xml); m !== null && out.length < MAX_MERGED_RANGES; m = ref.exec(xml)) {
    const [a, b] = [columnIndex(m[1]!), columnIndex(m[3]!)];
    const [r1, r2] = [Number(m[2]), Number(m[4])];
    out.push({ top: Math.min(r1, r2), bottom: Math.max(r1, r2), left: Math.min(a, b), right: Math.max(a, b) });
  }
  return out;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML text with its character and entity references replaced by the characters they stand for. */
function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,8}|#\d{1,8}|lt|gt|amp|quot|apos);/gi, (_, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref.toLowerCase()] ?? '';
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
  });
}

/**
 * The text of each cell that holds rich text in the cell itself
 * (`<c t="inlineStr"><is><r>..</r><r>..</r></is></c>`, as openpyxl writes it):
 * the reader keeps only its last run's. The text is every run's, in order;
 * a phonetic guide (<rPh>) is not shown in the cell and is left out.
 */
export function inlineRichTexts(xml: string): PartText[] {
  const out: PartText[] = [];
  const cell = /<(?:[\w-]+:)?c\s[^>]*?\br="\$?([A-Z]{1,3})\$?(\d{1,7})"[^>]*>\s*<(?:[\w-]+:)?is>([\s\S]*?)<\/(?:[\w-]+:)?is>/g;
  for (let m = cell.exec(xml); m !== null; m = cell.exec(xml)) {
    const body = m[3]!;
    if (!/<(?:[\w-]+:)?r[\s>]/.test(body)) continue;
    const shown = body.replace(/<(?:[\w-]+:)?rPh[\s>][\s\S]*?<\/(?:[\w-]+:)?rPh>/g, '');
    const runs = [...shown.matchAll(/<(?:[\w-]+:)?t(?:\s[^>]*)?>([\s\S]*?)<\/(?:[\w-]+:)?t>/g)].map((t) => t[1]!);
    out.push({ row: Number(m[2]), col: columnIndex(m[1]!), text: decodeXml(runs.join('')) });
  }
  return out;
}

/** A cell's place: row as the spreadsheet numbers it (header = 1), column 0-based. */
export interface PartCell {
  row: number;
  col: number;
}

/**
 * The cells whose formula saved a TRUE or FALSE (`<c t="b"><f>..</f><v>1</v></c>`): the
 * reader keeps a formula's result as a number whatever its type, so `=D2>0` in a stock
 * column would be read as a stock of 1.
 */
export function booleanFormulaCells(xml: string): PartCell[] {
  const out: PartCell[] = [];
  const cell = /<(?:[\w-]+:)?c\s([^>]*?)>\s*<(?:[\w-]+:)?f[\s>/]/g;
  for (let m = cell.exec(xml); m !== null; m = cell.exec(xml)) {
    const attributes = m[1]!;
    if (!/\st="b"/.test(` ${attributes}`)) continue;
    const ref = /\br="\$?([A-Z]{1,3})\$?(\d{1,7})"/.exec(attributes);
    if (ref) out.push({ row: Number(ref[2]), col: columnIndex(ref[1]!) });
  }
  return out;
}

/** A hyperlink: the cells it covers (rows numbered as the spreadsheet does, columns 0-based) and its target. */
export interface Hyperlink extends MergedRange {
  target: string;
}

/** The part of the relationships of `part` (xl/worksheets/_rels/sheet1.xml.rels for xl/worksheets/sheet1.xml). */
export function relsPartOf(part: string): string {
  return part.replace(/([^/]+)$/, '_rels/$1.rels');
}

/** The value, decoded, of the attribute whose name matches `name` (a pattern) in the start tag `tag`. */
function attribute(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? decodeXml(m[1]!) : undefined;
}

/**
 * The sheet's hyperlinks that lead out of the workbook: each <hyperlink> (after
 * the rows, where the reader does not look) whose relationship, in the sheet's
 * relationships part (`readRels`, read only when the sheet has links), gives
 * its target. A link within the workbook (a `location`, no relationship) is
 * left out.
 */
export function hyperlinks(xml: string, readRels: () => string | undefined): Hyperlink[] {
  const start = xml.search(/<(?:[\w-]+:)?hyperlinks[\s>]/);
  const relsXml = start < 0 ? undefined : readRels();
  if (relsXml === undefined) return [];
  const targets = new Map<string, string>();
  for (const [tag] of relsXml.matchAll(/<(?:[\w-]+:)?Relationship\s[^>]*>/g)) {
    const id = attribute(tag, 'Id');
    const target = attribute(tag, 'Target');
    if (id !== undefined && target !== undefined) targets.set(id, target);
  }
  const out: Hyperlink[] = [];
  const link = /<(?:[\w-]+:)?hyperlink\s[^>]*>/g;
  link.lastIndex = start;
  for (let m = link.exec(xml); m !== null && out.length < MAX_HYPERLINKS; m = link.exec(xml)) {
    const ref = /\sref="\$?([A-Z]{1,3})\$?(\d{1,7})(?::\$?([A-Z]{1,3})\$?(\d{1,7}))?"/.exec(m[0]);
    const id = attribute(m[0], '[\\w-]+:id');
    const target = id === undefined ? undefined : targets.get(id);
    if (!ref || target === undefined) continue;
    const [a, b] = [columnIndex(ref[1]!), columnIndex(ref[3] ?? ref[1]!)];
    const [r1, r2] = [Number(ref[2]), Number(ref[4] ?? ref[2])];
    out.push({ top: Math.min(r1, r2), bottom: Math.max(r1, r2), left: Math.min(a, b), right: Math.max(a, b), target });
  }
  return out;
}
