/**
 * The console's Korean refusals and warnings (src/console/assets/row-reasons.js,
 * errorReason and warningReason): the sentences the sheet reader writes when it
 * refuses a file or reads one with a warning, taken from the real reader fed real
 * files, and the console API's refusals a seller's page can meet, taken from the
 * server's own constants, read in Korean on the Korean page; the English page, and
 * any sentence the rules do not know, keep the text as it came.
 * (Not reached here: a zip that expands too far or uses another compression, and a
 * part outside the file; their rules are written the same way.)
 */
import { describe, expect, it } from 'vitest';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { tooLarge } from '../../src/excel/sniff-file.js';
import ExcelJS from 'exceljs';
import { MAX_PRODUCT_ROWS, TEMPLATE_EXAMPLE } from '../../src/excel/fields.js';
import { ENGLISH_HEADERS, KOREAN_HEADERS, buildProductSheet, buildSheet, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { errorReason, warningReason } from '../../src/console/assets/row-reasons.js';
import { INTERNAL_ERROR, LINKS_OFF, LINK_EXPIRED, LINK_INVALID, OTHERS_UPLOAD, REDIS_DOWN, lateUpload, lineFull, unknownUpload } from '../../src/console/api-error.js';
import { notReplicated } from '../../src/upload/replicated.js';
import { extraColumnsWarning } from '../../src/excel/parse-products.js';
import { writeZip } from '../helpers/zip-writer.js';
import { deflateRawSync } from 'node:zlib';

/** The reader's refusal of `bytes` uploaded as `name`. */
async function refusal(bytes: Buffer, name: string): Promise<string> {
  try {
    await parseSheetBytes(bytes, name);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${name} was not refused`);
}

const ole = (extra = '') => Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504), Buffer.from(extra, 'utf16le')]);
const noise = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + 11) % 256));
const GOOD = ['A-1', 'Mug', 12000, 30, 'C0101', 'Acme', 'A mug', 'https://img.example.com/1.jpg'];

/** A workbook whose only sheet, not named products, is hidden. */
async function hiddenOnly(): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  book.addWorksheet('notes', { state: 'hidden' }).addRow(ENGLISH_HEADERS);
  return Buffer.from(await book.xlsx.writeBuffer());
}

/** Each message reads in Korean on the Korean page, with no English sentence left, and unchanged on the English one. */
function expectKorean(messages: string[], reason: (message: string, lang: string) => string): void {
  expect(new Set(messages).size).toBe(messages.length);
  for (const message of messages) {
    const ko = reason(message, 'ko');
    expect(ko, message).not.toBe(message);
    // no English sentence left: only file names, column keys and format names stay in Latin letters
    expect(ko, message).not.toMatch(/\b(is|are|the|this|file|save|upload|not|has|holds|with|again|and|or|to|of|its|it)\b/);
    expect(reason(message, 'en')).toBe(message);
  }
}

describe('refusals and warnings in Korean', () => {
  it('translates every refusal the sheet reader writes, leaving no English sentence', async () => {
    const messages = [
      await refusal(Buffer.alloc(0), 'products.xlsx'),
      await refusal(Buffer.alloc(0), 'products.csv'),
      await refusal(Buffer.from('%PDF-1.4\n1 0 obj\n'), 'products.pdf'),
      await refusal(ole(), 'products.xls'),
      await refusal(ole('EncryptionInfo'), 'products.xlsx'),
      await refusal(Buffer.from('<!DOCTYPE html><html><body><table></table></body></html>'), 'products.xlsx'),
      await refusal(Buffer.from('<?xml version="1.0"?><Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"></Workbook>'), 'products.xml'),
      await refusal(Buffer.from('<?xml version="1.0"?><products></products>'), 'products.xlsx'),
      await refusal(Buffer.from('sku,name,price\nA-1,Mug,12000\n'), 'products.xlsx'),
      await refusal(Buffer.from('hello there\nthese are my notes\n'), 'products.xlsx'),
      await refusal(noise(4096), 'products.csv'),
      await refusal(noise(4096), 'products.xlsx'),
      await refusal(writeZip([{ name: 'word/document.xml', data: Buffer.from('<w/>') }]), 'products.docx'),
      await refusal(writeZip([{ name: 'ppt/presentation.xml', data: Buffer.from('<p/>') }]), 'products.pptx'),
      // (the writer deflates every entry: the type's name is left readable in an entry's name)
      await refusal(writeZip([{ name: 'opendocument.spreadsheet', data: Buffer.from('-') }, { name: 'content.xml', data: Buffer.from('<c/>') }]), 'products.ods'),
      await refusal(writeZip([{ name: 'photo.jpg', data: Buffer.from('not a sheet') }]), 'products.zip'),
      await refusal(await buildSheet(['name', 'price', 'stock', 'category'], [['Mug', 1, 1, 'C0101']] as never), 'products.xlsx'),
      await refusal(await buildSheet(ENGLISH_HEADERS, []), 'products.xlsx'),
      await refusal(await buildSheet([...ENGLISH_HEADERS, 'price'], [[...GOOD, 1]] as never), 'products.xlsx'),
      await refusal(Buffer.from('sku,name,price,stock,category\n"A-1,Mug,1,1,C0101\n'), 'products.csv'),
      await refusal(Buffer.from('sku,name,price,stock,category\n"A-1\nB"x,Mug,1,1,C0101\n'), 'products.csv'),
      await refusal(await buildSheet(ENGLISH_HEADERS, productRows([TEMPLATE_EXAMPLE]) as never), 'products.xlsx'),
      await refusal(await buildProductSheet(sampleProducts('M', MAX_PRODUCT_ROWS + 1)), 'products.xlsx'),
      await refusal(await hiddenOnly(), 'products.xlsx'),
      await refusal(writeZip([{ name: '[Content_Types].xml', data: Buffer.from('<x') }, { name: 'xl/workbook.xml', data: Buffer.from('not xml at all <<<') }]), 'products.xlsx'),
      await refusal(Buffer.concat([Buffer.from('PK\x03\x04'), noise(200)]), 'products.xlsx'),
      // a part whose bytes do not match the CRC-32 its directory declares
      await refusal(writeZip([{ name: 'xl/workbook.xml', deflated: { bytes: deflateRawSync(Buffer.from('<workbook/>')), size: 11, crc: 1 } }]), 'products.xlsx'),
      tooLarge(12 * 1024 * 1024).message,
      // the console's own size limit (src/console/upload-route.ts)
      'the upload is larger than 10 MiB (10485760 bytes): a sheet of 500 products is far smaller; remove images or split the file.',
    ];
    expectKorean(messages, errorReason);
  });

  it("translates the console API's other refusals a seller's page can meet", () => {
    expectKorean([
      REDIS_DOWN, lateUpload(10_000), lateUpload(2500), lineFull(1000), notReplicated(1, 2000).message, INTERNAL_ERROR,
      LINKS_OFF, LINK_EXPIRED, LINK_INVALID, OTHERS_UPLOAD, unknownUpload('0123456789abcdef01234567'),
    ], errorReason);
  });

  it("translates the sheet reader's warnings, shown with an upload's summary", async () => {
    const warnings = async (bytes: Buffer, name: string) => (await parseSheetBytes(bytes, name)).warnings;
    const rows = (n: number) => Array.from({ length: n }, (_, i) => [`A-${i + 1}`, ...GOOD.slice(1)]);
    const found = [
      ...(await warnings(await buildSheet([...ENGLISH_HEADERS, KOREAN_HEADERS[0]!], [[...GOOD, 'A-9']] as never), 'products.xlsx')),
      // values under a column with no header: one row, and more than three
      ...(await warnings(await buildSheet([...ENGLISH_HEADERS, ''], [[...GOOD, 'loose']] as never), 'products.xlsx')),
      ...(await warnings(await buildSheet([...ENGLISH_HEADERS, ''], rows(5).map((r) => [...r, 'loose']) as never), 'products.xlsx')),
      ...(await warnings(await buildSheet(ENGLISH_HEADERS, [...productRows([TEMPLATE_EXAMPLE]), GOOD] as never), 'products.xlsx')),
      ...(await warnings(await buildSheet(ENGLISH_HEADERS, [GOOD] as never), 'products.xls')),
      extraColumnsWarning(['color'], true)!,
      extraColumnsWarning(['color', 'size'], true)!,
    ];
    expect(found).toHaveLength(7);
    expectKorean(found, warningReason);
    expect(warningReason(found[2]!, 'ko')).toContain('외 2개');
    // a field is named by the page's header for it, when the page gives them
    const columns = Object.fromEntries(ENGLISH_HEADERS.map((f, i) => [f, KOREAN_HEADERS[i]!]));
    expect(warningReason(found[0]!, 'ko', columns)).toContain('판매자상품코드 열과 겹칩니다');
    expect(warningReason(found[5]!, 'ko', columns)).toContain(`(${KOREAN_HEADERS.join(', ')})`);
  });

  it('keeps what the rules do not know as it came', () => {
    expect(errorReason('the marketplace is down', 'ko')).toBe('the marketplace is down');
    expect(warningReason('the marketplace is down', 'ko')).toBe('the marketplace is down');
  });
});
