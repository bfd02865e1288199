/**
 * A bound on the bytes a workbook inflates to, measured by inflating it, not
 * read from its headers: a zip bomb may declare small sizes and still expand
 * to gigabytes when exceljs opens it. Each entry is inflated as a stream whose
 * output is counted and dropped, so memory stays at one chunk; inflation stops
 * at the first byte past the bound.
 */
import { createInflateRaw } from 'node:zlib';
import { UploadRejected } from './errors.js';
import { entryData, type ZipEntry } from './zip-directory.js';

/** Inflated bytes of every entry, measured; stops once `limit` is passed. */
async function inflatedSize(data: Buffer, limit: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const inflate = createInflateRaw();
    let size = 0;
    let settled = false;
    const finish = (n: number) => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      resolve(n);
    };
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(size);
    });
    inflate.on('end', () => finish(size));
    inflate.on('error', (err) => {
      if (!settled) {
        settled = true;
        reject(err);
      }
    });
    inflate.end(data);
  });
}

/**
 * @param maxEntry bound on one entry's inflated bytes
 * @param maxTotal bound on all entries together
 * @throws UploadRejected naming the bound when the workbook inflates past it, or when an entry is damaged.
 */
export async function checkInflatedSize(bytes: Buffer, entries: ZipEntry[], named: string, maxEntry: number, maxTotal: number): Promise<void> {
  let total = 0;
  const mib = (n: number) => `${Math.round(n / 1024 / 1024)} MiB`;
  for (const entry of entries) {
    if (entry.name.endsWith('/')) continue;
    const data = entryData(bytes, entry);
    if (!data) throw new UploadRejected(`${named} is damaged (a part lies outside the file): save it as .xlsx again and upload the new file.`);
    let size: number;
    if (entry.method === 0) size = data.length;
    else if (entry.method === 8) {
      try {
        size = await inflatedSize(data, Math.min(maxEntry, maxTotal - total));
      } catch {
        throw new UploadRejected(`${named} is damaged (a part cannot be unpacked): save it as .xlsx again and upload the new file.`);
      }
    } else {
      throw new UploadRejected(`${named} uses a zip compression Excel does not write: save it from Excel as .xlsx and upload the new file.`);
    }
    total += size;
    if (size > maxEntry || total > maxTotal) {
      throw new UploadRejected(
        `${named} expands to more than ${mib(size > maxEntry ? maxEntry : maxTotal)} when opened, far more than 500 products need: remove images and unused sheets, or split the file.`,
      );
    }
  }
}
