/**
 * A seller's file -> parsed products. The size is checked before any byte is
 * read; the format is judged by content; then the rules are applied.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { UploadRejected } from './errors.js';
import { MAX_PRODUCT_ROWS } from './fields.js';
import { parseProducts, type ParsedSheet } from './parse-products.js';
import { readCsv } from './read-csv.js';
import { readWorkbook } from './read-workbook.js';
import { MAX_ENTRY_BYTES, MAX_EXPANDED_BYTES, MAX_FILE_BYTES, sniffFile, tooLarge } from './sniff-file.js';
import { checkInflatedSize } from './inflate-bound.js';

export interface LoadedSheet extends ParsedSheet {
  file: string;
  /** sha256 of the file's bytes, hex. */
  sha256: string;
}

/** @throws UploadRejected with one sentence for any file that cannot be used. */
export async function loadSheet(path: string): Promise<LoadedSheet> {
  let size: number;
  try {
    const info = await stat(path);
    // the path is the seller's, as typed: never at the start of the sentence, where it could be capitalised
    if (!info.isFile()) throw new UploadRejected(`the path ${path} is ${info.isDirectory() ? 'a folder' : 'not a regular file'}: give the path of the .xlsx sheet itself.`);
    size = info.size;
  } catch (err) {
    if (err instanceof UploadRejected) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UploadRejected(
      code === 'ENOENT' ? `the file ${path} does not exist: check the path.` : `the file ${path} cannot be read (${code ?? 'unknown error'}): check its permissions.`,
    );
  }
  if (size > MAX_FILE_BYTES) throw tooLarge(size);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new UploadRejected(`the file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unknown error'}): check its permissions.`);
  }
  return parseSheetBytes(bytes, basename(path));
}

export async function parseSheetBytes(bytes: Buffer, fileName: string): Promise<LoadedSheet> {
  const { format, warnings, entries, named } = sniffFile(bytes, fileName);
  // the headers' sizes were checked; a zip bomb's may lie: measure what it inflates to
  if (entries) await checkInflatedSize(bytes, entries, named, MAX_ENTRY_BYTES, MAX_EXPANDED_BYTES);
  const stopAfter = MAX_PRODUCT_ROWS * 2;
  const sheet = format === 'xlsx' ? await readWorkbook(bytes, stopAfter, entries) : readCsv(bytes, stopAfter);
  const parsed = parseProducts(sheet);
  return {
    ...parsed,
    warnings: [...warnings, ...parsed.warnings],
    file: fileName,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}
