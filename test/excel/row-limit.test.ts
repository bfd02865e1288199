/**
 * The 500-row limit (excel-format.md) counts the seller's products: the
 * template's example, left in row 2, is not one of them.
 */
import { describe, expect, it } from 'vitest';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { TEMPLATE_EXAMPLE, FIELDS } from '../../src/excel/fields.js';
import { ENGLISH_HEADERS, buildSheet, productRows, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { rejection } from '../helpers/rejection.js';

const EXAMPLE_ROW = FIELDS.map((f) => TEMPLATE_EXAMPLE[f] ?? '');

describe('the row limit and the template example', () => {
  it('reads the example kept in row 2 and 500 products below it: the example does not count', async () => {
    const s = await parseSheetBytes(await buildSheet(ENGLISH_HEADERS, [EXAMPLE_ROW, ...productRows(sampleProducts('A', 500))]), 'p.xlsx');
    expect(s.errors).toEqual([]);
    expect(s.rows).toBe(500);
    expect(s.valid).toHaveLength(500);
    expect(s.valid[0]!.row).toBe(3);
    expect(s.valid[499]!.row).toBe(502);
    expect(s.warnings).toEqual(["row 2 is the template's example (SKU-0001): not registered."]);
  });

  it('rejects the example and 501 products, counting the products only', async () => {
    const msg = await rejection(parseSheetBytes(await buildSheet(ENGLISH_HEADERS, [EXAMPLE_ROW, ...productRows(sampleProducts('A', 501))]), 'p.xlsx'));
    expect(msg).toContain('the file has 501 product rows; at most 500 are allowed');
  });
});
