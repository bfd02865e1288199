/**
 * Reads a zip's central directory (names, declared sizes and checksums) without
 * decompressing anything, so that a workbook that would expand to gigabytes is
 * refused before it is opened. Pure: bytes in, entries out.
 */
export interface ZipEntry {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
  /** 0 stored, 8 deflated (others are not used by workbooks). */
  method: number;
  /** Where the entry's local header starts. */
  localOffset: number;
  /** The CRC-32 of the entry's inflated bytes, as the central directory declares it. */
  crc32: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;

/** Where the end-of-central-directory record starts, or -1 when there is none. */
function findEndRecord(bytes: Buffer): number {
  const min = Math.max(0, bytes.length - 65_557);
  for (let i = bytes.length - 22; i >= min; i--) {
    if (bytes.readUInt32LE(i) === EOCD) return i;
  }
  return -1;
}

/** Where the central directory starts (the end of the entries' data), or undefined when it cannot be found. */
export function centralDirectoryOffset(bytes: Buffer): number | undefined {
  const eocd = findEndRecord(bytes);
  if (eocd < 0) return undefined;
  const offset = bytes.readUInt32LE(eocd + 16);
  return offset <= eocd ? offset : undefined;
}

/** @returns the entries, or undefined when the directory is missing or damaged. */
export function readZipDirectory(bytes: Buffer): ZipEntry[] | undefined {
  const eocd = findEndRecord(bytes);
  if (eocd < 0) return undefined;
  const count = bytes.readUInt16LE(eocd + 10);
  const size = bytes.readUInt32LE(eocd + 12);
  let offset = bytes.readUInt32LE(eocd + 16);
  if (offset + size > bytes.length) return undefined;
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (offset + 46 > bytes.length || bytes.readUInt32LE(offset) !== CENTRAL) return undefined;
    const method = bytes.readUInt16LE(offset + 10);
    const crc32 = bytes.readUInt32LE(offset + 16);
    const compressedSize = bytes.readUInt32LE(offset + 20);
    const uncompressedSize = bytes.readUInt32LE(offset + 24);
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    const localOffset = bytes.readUInt32LE(offset + 42);
    if (offset + 46 + nameLength > bytes.length) return undefined;
    const name = bytes.toString('utf8', offset + 46, offset + 46 + nameLength);
    entries.push({ name, compressedSize, uncompressedSize, method, localOffset, crc32 });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

const LOCAL = 0x04034b50;

/** The entry's compressed bytes, located through its local header; undefined when they lie outside the file. */
export function entryData(bytes: Buffer, entry: ZipEntry): Buffer | undefined {
  const at = entry.localOffset;
  if (at + 30 > bytes.length || bytes.readUInt32LE(at) !== LOCAL) return undefined;
  const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
  const end = start + entry.compressedSize;
  return end <= bytes.length ? bytes.subarray(start, end) : undefined;
}
