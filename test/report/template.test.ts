import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { buildTemplate, EXAMPLE } from '../../src/report/template.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';

describe('bulk-register template', () => {
  for (const lang of ['en', 'ko'] as const) {
    it(`(${lang}) has headers, a frozen header row, widths, validation, instructions, and uploads cleanly`, async () => {
      const bytes = await buildTemplate(lang);
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.load(bytes as never);
      const ws = wb.worksheets[0]!;
      expect(ws.name).toBe(lang === 'en' ? 'products' : '상품');
      const headers = (ws.getRow(1).values as unknown[]).slice(1);
      expect(headers).toEqual(lang === 'en'
        ? ['sku', 'name', 'price', 'stock', 'category', 'brand', 'description', 'imageUrl']
        : ['판매자상품코드', '상품명', '판매가', '재고수량', '카테고리코드', '브랜드', '상품설명', '대표이미지']);
      expect(ws.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
      expect(ws.getColumn(2).width).toBeGreaterThanOrEqual(20);
      expect(ws.getCell('C2').dataValidation).toMatchObject({ type: 'whole', formulae: [1, 1_000_000_000] });
      expect(ws.getCell('D500').dataValidation).toMatchObject({ type: 'whole', formulae: [0, 99_999] });
      const info = wb.worksheets[1]!;
      expect(info.name).toBe(lang === 'en' ? 'instructions' : '안내');
      expect(String(info.getCell('C4').value)).toMatch(/1,000,000,000/);

      const parsed = await parseSheetBytes(bytes, 'template.xlsx');
      expect(parsed.errors).toEqual([]);
      expect(parsed.warnings).toEqual([]);
      expect(parsed.valid).toEqual([{ row: 2, product: EXAMPLE, attributes: {} }]);
      expect(parsed.extraColumns).toEqual([]);
    });
  }
});
