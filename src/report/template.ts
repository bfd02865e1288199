/**
 * The upload template: headers, a frozen header row, widths, validation, an
 * example row and instructions; then the marketplace's own columns, if any
 * (template-columns.ts), with their notes.
 */
import ExcelJS from 'exceljs';
import { ALIASES, FIELDS, MAX_PRODUCT_ROWS, REQUIRED, TEMPLATE_EXAMPLE, TEXT_LIMITS, WHOLE_LIMITS, type Field } from '../excel/fields.js';
import type { TemplateColumn } from './template-columns.js';

export type Lang = 'ko' | 'en';

const RULES: Record<Field, { en: string; ko: string }> = {
  sku: { en: 'Required. Your own product code, 1-50 characters, unique within the file.', ko: '필수. 판매자 상품코드, 1-50자, 파일 안에서 중복 불가.' },
  name: { en: 'Required. Product name, 1-100 characters.', ko: '필수. 상품명, 1-100자.' },
  price: { en: 'Required. Sale price in KRW, a whole number from 1 to 1,000,000,000.', ko: '필수. 판매가(원), 1 ~ 1,000,000,000 사이의 정수.' },
  stock: { en: 'Required. Quantity in stock, a whole number from 0 to 99,999.', ko: '필수. 재고수량, 0 ~ 99,999 사이의 정수.' },
  category: { en: 'Required. Category code, 1-20 characters.', ko: '필수. 카테고리코드, 1-20자.' },
  brand: { en: 'Optional. Up to 50 characters.', ko: '선택. 최대 50자.' },
  description: { en: 'Optional. Up to 5,000 characters.', ko: '선택. 최대 5,000자.' },
  imageUrl: { en: 'Optional. An http or https URL of the main image.', ko: '선택. 대표 이미지의 http 또는 https 주소.' },
};

export function headerFor(field: Field, lang: Lang): string {
  return lang === 'ko' ? ALIASES[field][1]! : field;
}

const WIDTHS: Record<Field, number> = { sku: 16, name: 32, price: 12, stock: 10, category: 14, brand: 14, description: 40, imageUrl: 40 };

const MARKETPLACE_NOTE: Record<Lang, string> = {
  en: "The marketplace's own column: passed on as written.",
  ko: '마켓 고유 항목: 입력한 그대로 전달됩니다.',
};

/** @param extra the marketplace's own columns, after ours (headers checked by loadTemplateColumns) */
export async function buildTemplate(lang: Lang, extra: readonly TemplateColumn[] = []): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet(lang === 'ko' ? '상품' : 'products', { views: [{ state: 'frozen', ySplit: 1 }] });
  ws.columns = [
    ...FIELDS.map((f) => ({ header: headerFor(f, lang), key: f, width: WIDTHS[f] })),
    ...extra.map((c, i) => ({ header: c.header, key: `extra${i}`, width: Math.min(40, Math.max(14, [...c.header].length + 4)) })),
  ];
  ws.getRow(1).font = { bold: true };
  ws.addRow([...FIELDS.map((f) => TEMPLATE_EXAMPLE[f] ?? ''), ...extra.map((c) => c.example ?? '')]);
  // One validation per column, over its product rows. Set cell by cell, exceljs merges them
  // into ranges in the order of their addresses as text (A10 before A2), and wrote A10:A501
  // beside A2:A501: overlapping ranges, which Excel offers to repair when the file opens.
  const validations = (ws as unknown as { dataValidations: { add(range: string, v: ExcelJS.DataValidation): void } }).dataValidations;
  const rows = (field: Field) => {
    const col = ws.getColumn(FIELDS.indexOf(field) + 1).letter;
    // row 2's example, which a seller may leave in (it is not counted), and 500 products below it
    return `${col}2:${col}${MAX_PRODUCT_ROWS + 2}`;
  };
  for (const field of ['price', 'stock'] as const) {
    const { min, max } = WHOLE_LIMITS[field]!;
    validations.add(rows(field), {
      type: 'whole', operator: 'between', allowBlank: true, formulae: [min, max], showErrorMessage: true,
      errorTitle: field, error: RULES[field][lang],
    });
  }
  for (const field of ['sku', 'name', 'category', 'brand', 'description'] as const) {
    const { max } = TEXT_LIMITS[field]!;
    validations.add(rows(field), { type: 'textLength', operator: 'lessThanOrEqual', allowBlank: true, formulae: [max], showErrorMessage: true, error: RULES[field][lang] });
  }

  const info = wb.addWorksheet(lang === 'ko' ? '안내' : 'instructions');
  info.columns = [{ width: 18 }, { width: 12 }, { width: 90 }];
  info.addRow(lang === 'ko' ? ['항목', '필수', '규칙'] : ['column', 'required', 'rule']).font = { bold: true };
  for (const f of FIELDS) info.addRow([headerFor(f, lang), REQUIRED.includes(f) ? (lang === 'ko' ? '예' : 'yes') : (lang === 'ko' ? '아니오' : 'no'), RULES[f][lang]]);
  // not checked here: whether the marketplace requires them is its own rule
  for (const c of extra) info.addRow([c.header, '', c.note ?? MARKETPLACE_NOTE[lang]]);
  info.addRow([]);
  const notes = lang === 'ko'
    ? ['한 파일에 최대 500개 상품. 2행의 예시는 지우거나 덮어쓰세요.', '빈 행은 건너뜁니다. 날짜는 어느 항목에도 쓸 수 없습니다.', '영문 또는 한글 머리글 모두 인식됩니다.']
    : ['At most 500 products per file. Replace or delete the example in row 2.', 'Blank rows are skipped. Dates are not valid in any column.', 'Headers may be in English or Korean.'];
  for (const n of notes) info.addRow([n]);
  return Buffer.from(await wb.xlsx.writeBuffer());
}
