/**
 * A bound on the bytes a workbook inflates to, measured by inflating it, not
 * read from its headers: a zip bomb may declare small sizes and still expand
 * to gigabytes when exceljs opens it. Each entry is inflated as a stream whose
 * output is counted and dropped, so memory stays at one chunk; inflation stops
 * at the first byte past the bound.
 *
 * The same pass checks each entry's CRC-32 against the one its directory
 * declares: exceljs checks none, so a file damaged inside a compressed part
 * that still inflates (a bad copy, a disk error) would be read as other
 * values. zlib.crc32 came in Node 20.15; on an older Node the check is skipped.
 */
import * as zlib from 'node:zlib';
import { UploadRejected } from './errors.js';
import { entryData, type ZipEntry } from './zip-directory.js';

const crc32: ((data: Buffer, value?: number) => number) | undefined = (zlib as { crc32?: (data: Buffer, value?: number) => number }).crc32;

interface Inflated {
  size: number;
  /** of every byte, when the entry was inflated whole and the check is available */
  crc?: number;
}

/** An entry's inflated bytes, measured, and their CRC-32; stops once `limit` is passed. */
async function inflated(data: Buffer, limit: number): Promise<Inflated> {
  return new Promise((resolve, reject) => {
    const inflate = zlib.createInflateRaw();
    let size = 0;
    let crc = 0;
    let settled = false;
    const finish = (result: Inflated) => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      resolve(result);
    };
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish({ size });
      else if (crc32) crc = crc32(chunk, crc);
    });
    inflate.on('end', () => finish(crc32 ? { size, crc } : { size }));
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
 * @throws UploadRejected naming the bound when the workbook inflates past it, or when an entry is damaged
 *   (it lies outside the file, does not inflate, or its bytes do not match its CRC-32).
 */
export async function checkInflatedSize(bytes: Buffer, entries: ZipEntry[], named: string, maxEntry: number, maxTotal: number): Promise<void> {
  let total = 0;
  const mib = (n: number) => `${Math.round(n / 1024 / 1024)} MiB`;
  for (const entry of entries) {
    if (entry.name.endsWith('/')) continue;
    const data = entryData(bytes, entry);
    if (!data) throw new UploadRejected(`${named} is damaged (a part lies outside the file): save it as .xlsx again and upload the new file.`);
    let size: number;
    let crc: number | undefined;
    if (entry.method === 0) {
      size = data.length;
      crc = crc32?.(data);
    } else if (entry.method === 8) {
      try {
        ({ size, crc } = await inflated(data, Math.min(maxEntry, maxTotal - total)));
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
    if (crc !== undefined && crc >>> 0 !== entry.crc32) {
      throw new UploadRejected(`${named} is damaged (a part's contents do not match its checksum): save it as .xlsx again and upload the new file.`);
    }
  }
}
