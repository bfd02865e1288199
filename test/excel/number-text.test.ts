/**
 * Numbers stored as text (excel-format.md): what is read as a number, and
 * what is refused with a sentence saying what to type.
 */
import { describe, expect, it } from 'vitest';
import { parseProducts } from '../../src/excel/parse-products.js';
import { ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import type { SheetCell, SheetData } from '../../src/excel/sheet-cell.js';

const text = (t: string): SheetCell => ({ kind: 'text', text: t });

/** One row per price (as text), each with its own SKU; stock 1. */
function prices(values: string[]): SheetData {
  return {
    sheetName: 'products',
    header: ENGLISH_HEADERS.map(text),
    rows: values.map((v, i) => ({ row: i + 2, cells: [text(`S-${i}`), text('Mug'), text(v), text('1'), text('C01')] })),
    overLimit: false,
  };
}

const priceOf = (values: string[]) => {
  const s = parseProducts(prices(values));
  return values.map((_, i) => s.valid.find((r) => r.row === i + 2)?.product.price ?? s.errors.find((e) => e.row === i + 2)?.message);
};

describe('a number stored as text', () => {
  it('refuses a dot before three digits, which means thousands in Korea and much of Europe', () => {
    const rule = 'price must be a whole number from 1 to 1,000,000,000';
    expect(priceOf(['12.000', '1.500', '1.234.567', '-12.000'])).toEqual([
      `${rule} (got "12.000"); a dot between digit groups is a thousands separator in some countries and a decimal point in others: type the digits only (12000 if the dot separates thousands)`,
      `${rule} (got "1.500"); a dot between digit groups is a thousands separator in some countries and a decimal point in others: type the digits only (1500 if the dot separates thousands)`,
      `${rule} (got "1.234.567"); a dot between digit groups is a thousands separator in some countries and a decimal point in others: type the digits only (1234567 if the dots separate thousands)`,
      `${rule} (got "-12.000"); a dot between digit groups is a thousands separator in some countries and a decimal point in others: type the digits only (-12000 if the dot separates thousands)`,
    ]);
  });

  it('keeps what is unambiguous: a plain number, a comma-grouped one with a decimal point, a real decimal', () => {
    const rule = 'price must be a whole number from 1 to 1,000,000,000';
    expect(priceOf(['12000', ' 12,000 ', '12,000.000', '12.0', '1234.000', '0.500', '12.5', '12.50'])).toEqual([
      12000, 12000, 12000, 12, 1234, `${rule}; 0.5 is not a whole number`, `${rule}; 12.5 is not a whole number`, `${rule}; 12.5 is not a whole number`,
    ]);
  });
});

describe('the refusals in Korean (the console)', () => {
  it('translates the dot-grouped number refusal', async () => {
    const { rowReason } = await import('../../src/console/assets/row-reasons.js');
    const [m1, m2] = priceOf(['12.000', '1.234.567']) as string[];
    expect(rowReason(m1!, 'ko')).toBe('1 ~ 1,000,000,000 사이의 정수여야 합니다 (입력: "12.000"). 숫자 사이의 점은 나라에 따라 천 단위 구분 기호로도 소수점으로도 쓰이니 숫자만 입력하세요 (점이 천 단위 구분이라면 12000)');
    expect(rowReason(m2!, 'ko')).toBe('1 ~ 1,000,000,000 사이의 정수여야 합니다 (입력: "1.234.567"). 숫자 사이의 점은 나라에 따라 천 단위 구분 기호로도 소수점으로도 쓰이니 숫자만 입력하세요 (점이 천 단위 구분이라면 1234567)');
  });
});
