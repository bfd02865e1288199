/**
 * Refusals whose numbers or reasons must not contradict what the seller sees:
 * the file size, a URL over the length limit, a price or stock with a
 * currency sign, a unit or full-width digits.
 */
import { describe, expect, it } from 'vitest';
import { parseProducts } from '../../src/excel/parse-products.js';
import { tooLarge } from '../../src/excel/sniff-file.js';
import { ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import type { SheetCell, SheetData } from '../../src/excel/sheet-cell.js';
import { errorReason, rowReason } from '../../src/console/assets/row-reasons.js';

const text = (t: string): SheetCell => ({ kind: 'text', text: t });

/** One row per [price, stock, imageUrl] (as text), each with its own SKU. */
function rows(values: Array<[string, string, string?]>): SheetData {
  return {
    sheetName: 'products',
    header: ENGLISH_HEADERS.map(text),
    rows: values.map(([price, stock, url], i) => ({ row: i + 2, cells: [text(`S-${i}`), text('Mug'), text(price), text(stock), text('C01'), text(''), text(''), text(url ?? '')] })),
    overLimit: false,
  };
}
const messages = (values: Array<[string, string, string?]>) => parseProducts(rows(values)).errors.map((e) => `${e.row} ${e.message}`);

describe('the file size', () => {
  it('gives the size in bytes when it is over 10 MiB, so that no rounding says 10.0 MiB', () => {
    const msg = tooLarge(10_492_068).message;
    expect(msg).toBe('the file is 10,492,068 bytes, more than the 10 MiB (10,485,760 bytes) allowed: remove images or split the products into several files.');
    expect(errorReason(msg, 'ko')).toBe('파일 크기가 10,492,068바이트로, 최대 10 MiB(10,485,760바이트)를 넘습니다. 이미지를 지우거나 상품을 여러 파일로 나누세요.');
  });
});

describe('a URL over the length limit', () => {
  it('is told it is too long, with the limit', () => {
    const long = `https://img.example.com/${'a'.repeat(2100)}.jpg`;
    expect(messages([['1', '1', long]])).toEqual([`2 imageUrl must be at most 2,048 characters (got ${(long.length).toLocaleString('en-US')})`]);
    expect(rowReason(`imageUrl must be at most 2,048 characters (got ${(long.length).toLocaleString('en-US')})`, 'ko')).toBe('최대 2,048자까지 입력할 수 있습니다 (입력: 2,128자)');
    // exactly at the limit is a URL
    const at = `https://img.example.com/${'a'.repeat(2048 - 28)}.jpg`;
    expect(at).toHaveLength(2048);
    expect(parseProducts(rows([['1', '1', at]])).valid[0]!.product.imageUrl).toBe(at);
  });
});

describe('a price or stock as a seller may type it', () => {
  const rule = 'price must be a whole number from 1 to 1,000,000,000';
  it('says to remove a currency sign or unit', () => {
    expect(messages([['₩12,000', '1'], ['12,000원', '1'], ['$12', '1'], ['1', '3개'], ['KRW 12000', '1']])).toEqual([
      `2 ${rule} (got "₩12,000"); remove the currency sign or unit ("₩") and type the number only`,
      `3 ${rule} (got "12,000원"); remove the currency sign or unit ("원") and type the number only`,
      `4 ${rule} (got "$12"); remove the currency sign or unit ("$") and type the number only`,
      '5 stock must be a whole number from 0 to 99,999 (got "3개"); remove the currency sign or unit ("개") and type the number only',
      `6 ${rule} (got "KRW 12000"); remove the currency sign or unit ("KRW") and type the number only`,
    ]);
    expect(rowReason(`${rule} (got "₩12,000"); remove the currency sign or unit ("₩") and type the number only`, 'ko'))
      .toBe('1 ~ 1,000,000,000 사이의 정수여야 합니다 (입력: "₩12,000"). 통화 기호나 단위("₩")를 빼고 숫자만 입력하세요');
  });

  it('reads full-width digits (a Korean IME types them) as the digits they are', () => {
    const s = parseProducts(rows([['１２０００', '０'], ['１２，０００', '３']]));
    expect(s.errors).toEqual([]);
    expect(s.valid.map((r) => [r.product.price, r.product.stock])).toEqual([[12000, 0], [12000, 3]]);
  });

  it('leaves other text as it was', () => {
    expect(messages([['abc', '1'], ['1e3', '1']])).toEqual([`2 ${rule} (got "abc")`, `3 ${rule} (got "1e3")`]);
  });
});
