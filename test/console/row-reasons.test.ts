/**
 * The console's Korean row errors (src/console/assets/row-reasons.js): every
 * sentence the sheet rules write, taken from the real parser, reads in Korean,
 * and the column is named by its Korean header; anything else is left as it came.
 */
import { describe, expect, it } from 'vitest';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { ENGLISH_HEADERS, buildSheet } from '../../src/fixtures/build-sheet.js';
import { rowReason } from '../../src/console/assets/row-reasons.js';
import { STRINGS } from '../../src/console/pages/i18n.js';

const GOOD = ['A-1', 'Mug', 12000, 30, 'C0101', 'Acme', 'A mug', 'https://img.example.com/1.jpg'];
const row = (changes: Record<number, unknown>) => GOOD.map((v, i) => (i in changes ? changes[i] : v));

describe('row reasons in Korean', () => {
  it('translates every sentence the sheet rules write, and names the column by its Korean header', async () => {
    const sheet = await parseSheetBytes(await buildSheet(ENGLISH_HEADERS, [
      row({ 0: '' }), // sku is required
      row({ 0: 'B-1', 1: 'x'.repeat(101) }), // at most 100 characters
      row({ 0: 'B-2', 2: 'abc' }), // not a number
      row({ 0: 'B-3', 2: 12.5 }), // not a whole number
      row({ 0: 'B-4', 3: 100_000 }), // out of range
      row({ 0: 'B-5', 4: new Date(Date.UTC(2026, 0, 2)) }), // a date in a text column
      row({ 0: 'B-6', 3: new Date(Date.UTC(2026, 0, 2)) }), // a date in a number column
      row({ 0: 'B-7', 7: 'ftp://img.example.com/1.jpg' }), // not http(s)
      row({ 0: 'B-8', 4: { error: '#N/A' } }), // an error cell
      row({ 0: 'B-7' }), // duplicate sku
      row({ 0: 'B-9', 2: '12,00' }), // a misplaced thousands separator
      row({ 0: 'B-10', 7: { text: 'photo', hyperlink: 'https://img.example.com/products/2026/mug-front-large.jpg' } }), // a link showing other text, quoted whole
    ] as never), 'rules.xlsx');
    const messages = sheet.errors.map((e) => e.message);
    expect(messages).toHaveLength(12);
    const korean = messages.map((m) => rowReason(m, 'ko'));
    for (const [i, ko] of korean.entries()) {
      expect(ko, messages[i]).not.toBe(messages[i]);
      // no English sentence left: only the values the seller typed may be in Latin letters
      expect(ko, messages[i]).not.toMatch(/\b(is|must|holds|required|whole|number|characters|got|duplicate|seen|dates?|the|error)\b/);
    }
    expect(korean).toEqual([
      '필수 항목입니다. 값을 입력하세요',
      '최대 100자까지 입력할 수 있습니다 (입력: 101자)',
      '1 ~ 1,000,000,000 사이의 정수여야 합니다 (입력: "abc")',
      '1 ~ 1,000,000,000 사이의 정수여야 합니다 (12.5: 정수가 아님)',
      '0 ~ 99,999 사이의 정수여야 합니다 (입력: 100,000)',
      '날짜가 들어 있습니다. 날짜는 쓸 수 없으니 글자로 입력하세요',
      '날짜가 들어 있습니다. 날짜는 쓸 수 없습니다',
      'http 또는 https로 시작하는 주소여야 합니다 (입력: "ftp://img.example.com/1.jpg")',
      '셀에 #N/A 오류가 있습니다. 수식 대신 값을 입력하세요',
      '같은 판매자상품코드가 9행에 이미 있습니다',
      '1 ~ 1,000,000,000 사이의 정수여야 합니다 (입력: "12,00"). 소수점 쉼표나 잘못된 자리의 천 단위 구분 기호는 쓸 수 없으니 구분 기호 없이 숫자만 입력하세요',
      'http 또는 https로 시작하는 주소여야 합니다 (입력: "photo", 링크: "https://img.example.com/products/2026/mug-front-large.jpg"). 셀에 주소를 직접 입력하세요',
    ]);
    expect(sheet.errors.map((e) => STRINGS.ko.columns[e.column])).toEqual(
      ['판매자상품코드', '상품명', '판매가', '판매가', '재고수량', '카테고리코드', '재고수량', '대표이미지', '카테고리코드', '판매자상품코드', '판매가', '대표이미지'],
    );
  });

  it('leaves English as it is, and any other reason (such as the API\'s) as it came', () => {
    expect(rowReason('price is required', 'en')).toBe('price is required');
    expect(STRINGS.en.columns.price).toBe('price');
    expect(rowReason('category: unknown category code', 'ko')).toBe('category: unknown category code');
    // a value that itself looks like a rule's words stays the seller's text
    expect(rowReason('imageUrl must be an http or https URL (got "$1 is required")', 'ko')).toBe('http 또는 https로 시작하는 주소여야 합니다 (입력: "$1 is required")');
  });
});
