/**
 * The console's share of extra columns, in-process (a dry run and the
 * template touch no Redis): the check names the columns the built-in adapter
 * drops, and GET /api/template adds TEMPLATE_COLUMNS_FILE's columns.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { loadConfig } from '../../src/config.js';
import { createConsoleApp } from '../../src/console/server.js';
import { extraColumnsWarning } from '../../src/excel/parse-products.js';
import { buildSheet, ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { createLogger } from '../../src/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'br-console-extra-'));

function appWith(env: Record<string, string>) {
  const lines: string[] = [];
  const log = createLogger({ level: 'info', pretty: false }, new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
  // open local access (no operator token, loopback host); nothing here reads Redis or the queue
  const app = createConsoleApp({ redis: {} as never, queues: {} as never, config: loadConfig(env), log, reader: {} as never, feed: {} as never, now: Date.now });
  return { app, lines };
}

async function check(env: Record<string, string>, sheet: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(sheet)]), 'extra.xlsx');
  form.append('seller', 'WEB1');
  form.append('dryRun', '1');
  const res = await appWith(env).app.request('/api/uploads', { method: 'POST', body: form, headers: { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-origin' } });
  expect(res.status).toBe(200);
  return (await res.json()) as { warnings: string[]; valid: number };
}

describe('console and extra columns', () => {
  it("the check warns once about the columns the built-in adapter does not send, and not with an adapter", async () => {
    const sheet = await buildSheet([...ENGLISH_HEADERS, 'origin'], [['A-1', 'Mug', 100, 1, 'C1', '', '', '', 'KR']]);
    const builtin = await check({}, sheet);
    expect(builtin).toMatchObject({ valid: 1, warnings: [extraColumnsWarning(['origin'], true)] });
    expect((await check({ REGISTRATION_ADAPTER: './market.mjs' }, sheet)).warnings).toEqual([]);
  });

  it("the template carries TEMPLATE_COLUMNS_FILE's columns; a bad file is a 500 with one sentence, its reason logged", async () => {
    const good = join(dir, 'columns.json');
    writeFileSync(good, JSON.stringify(['origin', { header: 'shippingFee', example: '2500' }]));
    const res = await appWith({ TEMPLATE_COLUMNS_FILE: good }).app.request('/api/template?lang=en');
    expect(res.status).toBe(200);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(await res.arrayBuffer());
    expect((wb.worksheets[0]!.getRow(1).values as unknown[]).slice(9)).toEqual(['origin', 'shippingFee']);

    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '["origin", "sku"]');
    const { app, lines } = appWith({ TEMPLATE_COLUMNS_FILE: bad });
    const refused = await app.request('/api/template?lang=ko');
    expect(refused.status).toBe(500);
    const body = (await refused.json()) as { error: string };
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatch(/^the template cannot be made: the marketplace columns file set by the operator is invalid/);
    expect(body.error).not.toContain(bad);
    expect(lines.join('')).toContain('is the template\'s own sku column');
  });
});
