/** A minimal zip writer (deflate), to build hostile workbooks byte by byte. */
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { entryData, readZipDirectory } from '../../src/excel/zip-directory.js';

export interface ZipInput {
  name: string;
  /** raw content, or a prebuilt deflate stream with its true size and CRC */
  data?: Buffer;
  deflated?: { bytes: Buffer; size: number; crc: number };
  /** lie about the uncompressed size in the headers */
  declaredSize?: number;
}

export function writeZip(entries: ZipInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const comp = e.deflated?.bytes ?? deflateRawSync(e.data!);
    const size = e.declaredSize ?? e.deflated?.size ?? e.data!.length;
    const crc = e.deflated?.crc ?? crc32(e.data!);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(0, 6); local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc >>> 0, 14); local.writeUInt32LE(comp.length, 18); local.writeUInt32LE(Math.min(size, 0xffffffff), 22);
    local.writeUInt16LE(name.length, 26); local.writeUInt16LE(0, 28);
    locals.push(local, name, comp);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6); central.writeUInt16LE(0, 8); central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc >>> 0, 16); central.writeUInt32LE(comp.length, 20); central.writeUInt32LE(Math.min(size, 0xffffffff), 24);
    central.writeUInt16LE(name.length, 28); central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + comp.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/**
 * A copy of the zip `bytes`, its entries in the same order, each entry's text
 * passed through `edit` (as another program would have written that part).
 */
export function rewriteZip(bytes: Buffer, edit: (name: string, text: string) => string): Buffer {
  const entries = readZipDirectory(bytes);
  if (!entries) throw new Error('not a zip');
  return writeZip(entries.map((e) => {
    const data = entryData(bytes, e)!;
    const text = (e.method === 8 ? inflateRawSync(data) : data).toString('utf8');
    return { name: e.name, data: Buffer.from(edit(e.name, text)) };
  }));
}

/** A copy of the workbook `xlsx` with the cells at the refs given (in its first sheet part) written as given. */
export function replaceCells(xlsx: Buffer, cells: Record<string, string>): Buffer {
  return rewriteZip(xlsx, (name, text) => (name === 'xl/worksheets/sheet1.xml'
    ? Object.entries(cells).reduce((xml, [ref, cell]) => xml.replace(new RegExp(`<c r="${ref}"[^>]*?(/>|>.*?</c>)`), cell), text)
    : text));
}
