import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { buildTemplate } from '../../src/report/template.js';
import { TEMPLATE_EXAMPLE as EXAMPLE } from '../../src/excel/fields.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { inflateRawSync } from 'node:zlib';
import { entryData, readZipDirectory } from '../../src/excel/zip-directory.js';

/** The `sqref` of each data validation in the template's product sheet, as written. */
function validationRanges(bytes: Buffer): string[] {
  const entry = readZipDirectory(bytes)!.find((e) => e.name === 'xl/worksheets/sheet1.xml')!;
  const data = entryData(bytes, entry)!;
  const xml = (entry.method === 8 ? inflateRawSync(data) : data).toString('utf8');
  return [...xml.matchAll(/<dataValidation [^>]*sqref="([^"]+)"/g)].map((m) => m[1]!);
}

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
      // one range per column, none overlapping another (Excel offers to repair a file whose do),
      // over the example and 500 products below it (the example is not counted)
      expect(validationRanges(bytes)).toEqual(['A2:A502', 'B2:B502', 'C2:C502', 'D2:D502', 'E2:E502', 'F2:F502', 'G2:G502']);
      const info = wb.worksheets[1]!;
      expect(info.name).toBe(lang === 'en' ? 'instructions' : '안내');
      expect(String(info.getCell('C4').value)).toMatch(/1,000,000,000/);

      // as downloaded, it holds only the example: nothing to register, and the seller is told why
      await expect(parseSheetBytes(bytes, 'template.xlsx')).rejects.toThrow(
        /^no products found: the sheet holds only the template's example \(row 2, SKU-0001\): replace it with your products/,
      );
      // products added below the example, which was left in: the example is not registered
      ws.getRow(3).values = ['MUG-350', 'Mug', 9000, 5, 'C0101'];
      const parsed = await parseSheetBytes(Buffer.from(await wb.xlsx.writeBuffer()), 'template.xlsx');
      expect(parsed.errors).toEqual([]);
      expect(parsed.warnings).toEqual(["row 2 is the template's example (SKU-0001): not registered."]);
      expect(parsed.rows).toBe(1);
      expect(parsed.valid).toEqual([{ row: 3, product: { sku: 'MUG-350', name: 'Mug', price: 9000, stock: 5, category: 'C0101' }, attributes: {} }]);
      expect(parsed.extraColumns).toEqual([]);
      // the example row rewritten as a product of the seller's own registers
      ws.getCell('B2').value = 'Ceramic mug 350ml, blue';
      const edited = await parseSheetBytes(Buffer.from(await wb.xlsx.writeBuffer()), 'template.xlsx');
      expect(edited.warnings).toEqual([]);
      expect(edited.valid.map((r) => r.product.name)).toEqual(['Ceramic mug 350ml, blue', 'Mug']);
      expect(EXAMPLE.sku).toBe('SKU-0001');
    });
  }
});
