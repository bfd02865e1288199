/**
 * The console's Korean refusals of a whole file (src/console/assets/row-reasons.js,
 * fileReason): the sentences the sheet reader writes when it refuses a file, taken
 * from the real reader fed real bad files, read in Korean on the Korean page; the
 * English page, and any sentence the rules do not know, keep the text as it came.
 * (Not reached here: a zip that expands too far or uses another compression, and a
 * part outside the file; their rules are written the same way.)
 */
import { describe, expect, it } from 'vitest';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { tooLarge } from '../../src/excel/sniff-file.js';
import ExcelJS from 'exceljs';
import { MAX_PRODUCT_ROWS, TEMPLATE_EXAMPLE } from '../../src/excel/fields.js';
import { ENGLISH_HEADERS, buildProductSheet, buildSheet, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { fileReason } from '../../src/console/assets/row-reasons.js';
import { writeZip } from '../helpers/zip-writer.js';

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

describe('file refusals in Korean', () => {
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
      tooLarge(12 * 1024 * 1024).message,
      // the console's own size limit (src/console/server.ts)
      'the upload is larger than 10 MiB (10485760 bytes): a sheet of 500 products is far smaller; remove images or split the file.',
    ];
    expect(new Set(messages).size).toBe(messages.length);
    for (const message of messages) {
      const ko = fileReason(message, 'ko');
      expect(ko, message).not.toBe(message);
      // no English sentence left: only file names, column keys and format names stay in Latin letters
      expect(ko, message).not.toMatch(/\b(is|the|this|file|save|upload|not|has|holds|with|again|and|or)\b/);
      expect(fileReason(message, 'en')).toBe(message);
    }
  });

  it('keeps what the rules do not know as it came', () => {
    expect(fileReason('the marketplace is down', 'ko')).toBe('the marketplace is down');
    expect(fileReason('a seller may cancel only its own uploads.', 'ko')).toBe('a seller may cancel only its own uploads.');
  });
});
