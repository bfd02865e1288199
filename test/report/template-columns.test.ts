/**
 * The marketplace's own columns in the template (TEMPLATE_COLUMNS_FILE or
 * `template --columns`): appended after ours with their notes, and a bad
 * file refused with one sentence.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { ConfigError } from '../../src/config.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { buildTemplate } from '../../src/report/template.js';
import { TEMPLATE_EXAMPLE as EXAMPLE } from '../../src/excel/fields.js';
import { loadTemplateColumns, MAX_TEMPLATE_COLUMNS, parseTemplateColumns } from '../../src/report/template-columns.js';
import { baseEnv, runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'br-template-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const COLUMNS = ['origin', { header: 'shippingFee', note: 'KRW, 0 for free shipping', example: '2500' }, { header: '인증번호', example: 'KC-123' }];

async function workbook(bytes: Buffer): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(bytes as never);
  return wb;
}

describe('template columns', () => {
  it('are appended after ours, with their examples and notes, and the template still uploads cleanly', async () => {
    const parsed = parseTemplateColumns(JSON.stringify(COLUMNS));
    expect(parsed).toEqual({ ok: true, columns: [{ header: 'origin' }, { header: 'shippingFee', note: 'KRW, 0 for free shipping', example: '2500' }, { header: '인증번호', example: 'KC-123' }] });
    const bytes = await buildTemplate('en', parsed.ok ? parsed.columns : []);
    const wb = await workbook(bytes);
    const ws = wb.worksheets[0]!;
    expect((ws.getRow(1).values as unknown[]).slice(1)).toEqual(['sku', 'name', 'price', 'stock', 'category', 'brand', 'description', 'imageUrl', 'origin', 'shippingFee', '인증번호']);
    expect((ws.getRow(2).values as unknown[]).slice(9)).toEqual(['', '2500', 'KC-123']);
    const info = wb.worksheets[1]!;
    const notes = new Map<string, string>();
    info.eachRow((row) => notes.set(String(row.getCell(1).value), String(row.getCell(3).value)));
    expect(notes.get('shippingFee')).toBe('KRW, 0 for free shipping');
    expect(notes.get('origin')).toBe("The marketplace's own column: passed on as written.");
    // our rules keep their rows
    expect(String(info.getCell('C4').value)).toMatch(/1,000,000,000/);

    // the example row made the seller's own (a SKU of theirs): its marketplace columns are read
    ws.getCell('A2').value = 'MUG-350';
    const sheet = await parseSheetBytes(Buffer.from(await wb.xlsx.writeBuffer()), 'template.xlsx');
    expect(sheet.errors).toEqual([]);
    expect(sheet.warnings).toEqual([]);
    expect(sheet.extraColumns).toEqual(['origin', 'shippingFee', '인증번호']);
    expect(sheet.valid).toEqual([{ row: 2, product: { ...EXAMPLE, sku: 'MUG-350' }, attributes: { shippingFee: '2500', 인증번호: 'KC-123' } }]);
  });

  it('refuse a file that is not a list of columns, saying what is wrong', () => {
    const reason = (text: string) => {
      const r = parseTemplateColumns(text);
      return r.ok ? 'accepted' : r.reason;
    };
    expect(reason('{"origin": 1}')).toMatch(/^it holds an object, not a JSON array of columns/);
    expect(reason('["origin",')).toMatch(/^it is not JSON \(/);
    expect(reason('["origin", 3]')).toMatch(/^entry 2 is a number: expected a header, or an object/);
    expect(reason('[{"note": "x"}]')).toMatch(/^entry 1 has no "header" text/);
    expect(reason('[{"header": "a", "exmaple": "x"}]')).toMatch(/^entry 1 has "exmaple": expected/);
    expect(reason('[{"header": "a", "example": 5}]')).toMatch(/^entry 1's "example" is not text/);
    expect(reason('["  "]')).toBe('entry 1 has an empty header');
    expect(reason('["origin", "판매가"]')).toBe('entry 2\'s header "판매가" is the template\'s own price column');
    expect(reason('["Origin", " origin "]')).toBe('entries 1 and 2 have the same header "origin"');
    expect(reason(JSON.stringify(Array.from({ length: MAX_TEMPLATE_COLUMNS + 1 }, (_, i) => `c${i}`)))).toContain('at most 192 fit');
    expect(reason('[]')).toBe('accepted');
  });

  it('name the variable or the flag and the file when the file is bad', async () => {
    const bad = file('bad.json', '{"origin": 1}');
    await expect(loadTemplateColumns(bad, 'TEMPLATE_COLUMNS_FILE')).rejects.toThrow(ConfigError);
    await expect(loadTemplateColumns(bad, 'TEMPLATE_COLUMNS_FILE')).rejects.toThrow(`TEMPLATE_COLUMNS_FILE=${JSON.stringify(bad)} is invalid: it holds an object, not a JSON array of columns`);
    await expect(loadTemplateColumns(join(dir, 'none.json'), '--columns')).rejects.toThrow(`--columns ${JSON.stringify(join(dir, 'none.json'))} is invalid: no such file (`);
    // a BOM, as Windows editors write it, is fine
    expect(await loadTemplateColumns(file('bom.json', '\uFEFF["origin"]'), '--columns')).toEqual([{ header: 'origin' }]);
  });
});

describe('bulk-register template', () => {
  const good = file('columns.json', JSON.stringify(COLUMNS));

  it('adds the columns of --columns, which wins over TEMPLATE_COLUMNS_FILE', async () => {
    const out = join(dir, 'flag.xlsx');
    const r = await runCli(['template', out, '--lang', 'ko', '--columns', good], baseEnv({ TEMPLATE_COLUMNS_FILE: file('other.json', '["other"]') }));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('with 3 marketplace columns after ours');
    const headers = ((await workbook(readFileSync(out))).worksheets[0]!.getRow(1).values as unknown[]).slice(1);
    expect(headers.slice(0, 2)).toEqual(['판매자상품코드', '상품명']);
    expect(headers.slice(8)).toEqual(['origin', 'shippingFee', '인증번호']);

    const fromEnv = join(dir, 'env.xlsx');
    expect((await runCli(['template', fromEnv, '--lang', 'en'], baseEnv({ TEMPLATE_COLUMNS_FILE: good }))).code).toBe(0);
    expect(((await workbook(readFileSync(fromEnv))).worksheets[0]!.getRow(1).values as unknown[]).slice(9)).toEqual(['origin', 'shippingFee', '인증번호']);
  });

  it('refuses a bad columns file with one sentence naming its source, the file and the fault, and exit 1', async () => {
    const bad = file('broken.json', '["origin", {"header": "price"}]');
    const flag = await runCli(['template', join(dir, 'x.xlsx'), '--columns', bad], baseEnv({}));
    expect(flag.code).toBe(1);
    expect(flag.stdout).toBe('');
    expect(flag.stderr).toBe(`--columns ${JSON.stringify(bad)} is invalid: entry 2's header "price" is the template's own price column (${bad}).\n`);

    const env = await runCli(['template', join(dir, 'y.xlsx')], baseEnv({ TEMPLATE_COLUMNS_FILE: join(dir, 'missing.json') }));
    expect(env.code).toBe(1);
    expect(env.stderr.trim().split('\n')).toHaveLength(1);
    expect(env.stderr).toContain(`TEMPLATE_COLUMNS_FILE=${JSON.stringify(join(dir, 'missing.json'))} is invalid: no such file`);
    expect(env.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });
});
