/**
 * Judges a file's format by its bytes, not its name.
 * Pure: takes the bytes and the file name, returns what it is or throws UploadRejected.
 */
import { extname } from 'node:path';
import { UploadRejected } from './errors.js';
import { REQUIRED, fieldForHeader } from './fields.js';
import { decodeCsv, detectDelimiter } from './read-csv.js';
import { readZipDirectory, type ZipEntry } from './zip-directory.js';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/**
 * No part of a 500-product workbook comes near these once expanded (a zip bomb
 * does): 500 rows of the longest text every field allows are about 3 MiB of XML.
 * Checked against the headers here, and against the bytes actually inflated in
 * inflate-bound.ts.
 */
export const MAX_ENTRY_BYTES = 64 * 1024 * 1024;
export const MAX_EXPANDED_BYTES = 128 * 1024 * 1024;

export type SheetFormat = 'xlsx' | 'csv';

const has = (bytes: Buffer, text: string, encoding: BufferEncoding = 'latin1') =>
  bytes.indexOf(Buffer.from(text, encoding)) !== -1;

/**
 * The share of control bytes (other than tab and line breaks) in the first
 * 4 KiB: 1 when it holds a NUL byte, which no 8-bit text holds.
 */
function controlShare(bytes: Buffer): number {
  const sample = bytes.subarray(0, 4096);
  if (sample.length === 0) return 1;
  let control = 0;
  for (const b of sample) {
    if (b === 0) return 1;
    if (b < 9 || (b > 13 && b < 32)) control++;
  }
  return control / sample.length;
}

/** True when the bytes start with the byte order mark of UTF-16 (LE or BE), as Excel's "Unicode Text" writes. */
export function hasUtf16Bom(bytes: Buffer): boolean {
  return (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
}

/**
 * True when text reads as a table: its first line names one of the sheet's
 * columns, or its first lines hold the same number (2 or more) of
 * comma-, semicolon- or tab-separated cells.
 */
export function looksLikeCsv(text: string): boolean {
  const lines = text.split(/\r\n|\n|\r/).filter((line) => line.trim() !== '').slice(0, 5);
  if (lines.length === 0) return false;
  const delimiter = detectDelimiter(lines[0]!);
  const first = lines[0]!.split(delimiter);
  if (first.some((cell) => fieldForHeader(cell.replace(/"/g, '').trim()) !== undefined)) return true;
  return lines.length >= 2 && first.length >= 2 && lines.every((line) => line.split(delimiter).length === first.length);
}

/** The kind of image the bytes start as (a screenshot of a sheet, uploaded by mistake), else undefined. */
function imageKind(bytes: Buffer): string | undefined {
  const ascii = (from: number, to: number) => bytes.subarray(from, to).toString('latin1');
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'PNG';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'JPEG';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'GIF';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'WebP';
  const brand = ascii(8, 12);
  if (ascii(4, 8) === 'ftyp' && /^(heic|heix|mif1|avif)$/.test(brand)) return brand === 'avif' ? 'AVIF' : 'HEIC';
  return undefined;
}

/**
 * @returns the format to read the bytes as, and warnings for the seller.
 * @throws UploadRejected for anything that is not an .xlsx workbook (or CSV text in a .csv, .txt or .tsv file).
 */
export function sniffFile(bytes: Buffer, fileName: string): { format: SheetFormat; warnings: string[]; entries?: ZipEntry[]; named: string } {
  const ext = extname(fileName).toLowerCase() || '(none)';
  const named = ext === '(none)' ? 'this file' : `this ${ext} file`;
  const csvName = ext === '.csv' || ext === '.txt' || ext === '.tsv';
  if (bytes.length === 0) {
    throw new UploadRejected(csvName
      ? 'the file is empty: export the sheet as CSV again (or save it as .xlsx) and upload the new file.'
      : 'the file is empty: save the sheet as .xlsx and upload it again.');
  }
  if (bytes.length > MAX_FILE_BYTES) throw tooLarge(bytes.length);

  if (bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5) && (bytes[3] === 4 || bytes[3] === 6)) {
    const entries = readZipDirectory(bytes);
    if (!entries) {
      throw new UploadRejected(`${named} is damaged or incomplete (its zip directory is missing): save it as .xlsx again and upload the new file.`);
    }
    const names = new Set(entries.map((e) => e.name));
    if (names.has('xl/workbook.xml')) {
      const expanded = entries.reduce((sum, e) => sum + e.uncompressedSize, 0);
      const largest = Math.max(...entries.map((e) => e.uncompressedSize));
      if (largest >= MAX_ENTRY_BYTES || expanded >= MAX_EXPANDED_BYTES) {
        throw new UploadRejected(
          `${named} expands to ${(expanded / 1024 / 1024).toFixed(0)} MiB when opened, far more than 500 products need: remove images and unused sheets, or split the file.`,
        );
      }
      const warnings = ext === '.xlsx' || ext === '.xlsm' ? [] : [`${named} holds an .xlsx workbook; it was read as .xlsx.`];
      return { format: 'xlsx', warnings, entries, named };
    }
    if (names.has('word/document.xml')) throw new UploadRejected(`${named} is a Word document, not a workbook: put the products in an Excel sheet saved as .xlsx.`);
    if (names.has('ppt/presentation.xml')) throw new UploadRejected(`${named} is a PowerPoint file, not a workbook: put the products in an Excel sheet saved as .xlsx.`);
    if (names.has('content.xml') && has(bytes, 'opendocument.spreadsheet')) throw new UploadRejected(`${named} is an OpenDocument spreadsheet (.ods): save it as .xlsx.`);
    if (names.has('Index/Document.iwa')) throw new UploadRejected(`${named} is an Apple Numbers document: export it as Excel (File > Export To > Excel) and upload the .xlsx file.`);
    throw new UploadRejected(`${named} is a zip archive but not an .xlsx workbook: upload the .xlsx file itself, not an archive.`);
  }
  if (bytes.subarray(0, 8).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))) {
    if (has(bytes, 'EncryptionInfo', 'utf16le') || has(bytes, 'EncryptedPackage', 'utf16le')) {
      throw new UploadRejected('the workbook is password-protected: remove the password (File > Info > Protect Workbook) and save it as .xlsx again.');
    }
    throw new UploadRejected('legacy .xls is not supported: save the file as .xlsx.');
  }
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') {
    throw new UploadRejected(`${named} is a PDF document, not a workbook: upload the sheet saved as .xlsx.`);
  }
  const image = imageKind(bytes);
  if (image) {
    throw new UploadRejected(`${named} is an image (${image}), not a workbook: a picture of a sheet cannot be read; upload the sheet itself, saved as .xlsx.`);
  }
  const utf16 = hasUtf16Bom(bytes);
  const control = utf16 ? 0 : controlShare(bytes);
  if (control < 0.01) {
    // the first 8 KiB up to a line break, decoded as the CSV reader would (UTF-8, UTF-16 or CP949),
    // so that Korean headers are recognised; not the whole file, which the reader decodes once more
    const sample = bytes.subarray(0, 8192);
    const lineEnd = sample.length < bytes.length ? sample.lastIndexOf(0x0a) : -1;
    const head = decodeCsv(lineEnd > 0 ? sample.subarray(0, lineEnd) : sample).text.replace(/^\uFEFF/, '').trimStart();
    const lower = head.toLowerCase();
    if (lower.startsWith('<')) {
      if (lower.includes('<html') || lower.includes('<table') || lower.includes('<!doctype')) {
        throw new UploadRejected(`${named} holds a web page (HTML), not a workbook: open it in Excel and save it as .xlsx.`);
      }
      if (lower.includes('urn:schemas-microsoft-com:office:spreadsheet')) {
        throw new UploadRejected(`${named} is an Excel 2003 XML spreadsheet: open it in Excel and save it as .xlsx.`);
      }
      throw new UploadRejected(`${named} holds XML text, not a workbook: save the sheet as .xlsx.`);
    }
    if (csvName) return { format: 'csv', warnings: [], named };
    if (looksLikeCsv(head)) throw new UploadRejected(`${named} holds CSV text: save it as .xlsx or rename it .csv.`);
    throw new UploadRejected(
      `${named} holds plain text, not a product sheet (its first line names none of the columns ${REQUIRED.join(', ')}): upload the sheet saved as .xlsx.`,
    );
  }
  // a CSV may carry a few stray control characters in its cells (the rules strip them)
  if (csvName && control < 0.1) return { format: 'csv', warnings: [], named };
  if (csvName) throw new UploadRejected(`${named} holds binary data, not CSV text or a spreadsheet: export the sheet as CSV again or save it as .xlsx, and upload the new file.`);
  throw new UploadRejected(`${named} is not an .xlsx workbook (its content is not recognised): save the sheet as .xlsx.`);
}

/**
 * The refusal of a file over MAX_FILE_BYTES. Its size is given in bytes: in MiB,
 * a file just over the limit rounds to "10.0 MiB", which reads as allowed.
 */
export function tooLarge(size: number): UploadRejected {
  const bytes = (n: number) => n.toLocaleString('en-US');
  return new UploadRejected(
    `the file is ${bytes(size)} bytes, more than the ${MAX_FILE_BYTES / 1024 / 1024} MiB (${bytes(MAX_FILE_BYTES)} bytes) allowed: remove images or split the products into several files.`,
  );
}
