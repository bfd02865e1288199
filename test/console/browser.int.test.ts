/**
 * The console in a real browser (Debian's Chromium through playwright-core),
 * against a real Redis, a real worker pool and the mock API at 150-250 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { ENGLISH_HEADERS, KOREAN_HEADERS, buildProductSheet, buildSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { FIXTURES_DIR } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';
import { uploadMany } from '../helpers/uploads.js';
import { BAD_CATEGORY, OPS_TOKEN, openBrowserStage, type BrowserStage, type ConsoleStage, type PageOptions } from '../helpers/console-stage.js';

let b: BrowserStage;
let s: ConsoleStage;

beforeAll(async () => {
  b = await openBrowserStage();
  s = b.stage;
}, 60_000);

afterAll(async () => {
  await b?.close();
});

const newPage = (opts?: PageOptions) => b.newPage(opts);

async function workbookRows(path: string): Promise<string[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  const rows: string[][] = [];
  wb.worksheets[0]!.eachRow((row) => rows.push((row.values as unknown[]).slice(1).map((v) => String(v ?? ''))));
  return rows;
}

/** 12 good products and one the API refuses (its category does not exist). */
async function sheetWithOneRefused(prefix: string): Promise<Buffer> {
  const products = sampleProducts(prefix, 13);
  products[4] = { ...products[4]!, category: BAD_CATEGORY };
  return buildProductSheet(products);
}

describe('console in a browser', () => {
  it("a seller's whole path: template, check with errors shown, register, live progress to done without a reload, report download", async () => {
    const page = await newPage();
    let navigations = 0;
    page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations++; });
    await page.goto(s.sellerLink('WEB1'));
    expect(await page.locator('h1').textContent()).toBe('Bulk product registration');

    // the template, in both languages
    for (const lang of ['en', 'ko'] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(`[data-test="template-${lang}"]`)]);
      const path = await download.path();
      const header = (await workbookRows(path))[0]!;
      expect(header[0]).toBe(lang === 'en' ? 'sku' : '판매자상품코드');
    }

    // check: every bad row listed with its column, as `upload --dry-run --json` lists them
    const withErrors = join(FIXTURES_DIR, 'with-errors.xlsx');
    const cli = JSON.parse((await runCli(['upload', withErrors, '--seller', 'WEB1', '--dry-run', '--json'], s.stage.env)).stdout) as { errors: Array<{ row: number; column: string }> };
    expect(cli.errors.length).toBeGreaterThan(0);
    await page.setInputFiles('[data-test="file"]', withErrors);
    await page.click('[data-test="check"]');
    await page.waitForSelector('[data-test="errors"] [data-row]');
    const shown = await page.$$eval('[data-test="errors"] [data-row]', (items) => items.map((li) => ({ row: Number(li.getAttribute('data-row')), column: li.getAttribute('data-column') })));
    expect(shown).toEqual(cli.errors.map((e) => ({ row: e.row, column: e.column })));
    expect(await page.locator('[data-test="upload"]').count()).toBe(0); // a check enqueues nothing

    // register a sheet of 13 rows, one of which the API refuses
    const mine = { name: 'my products.xlsx', mimeType: 'application/octet-stream', buffer: await sheetWithOneRefused('WEB1') };
    await page.setInputFiles('[data-test="file"]', mine);
    await page.click('[data-test="register"]');
    const card = page.locator('[data-test="upload"]');
    await card.waitFor();
    expect(await card.getAttribute('data-total')).toBe('13');
    // 13 rows under 10 per 2 s: throttled on the way (with when the next permit frees), done in a few seconds, with no reload
    await page.waitForSelector('[data-test="upload"][data-state="throttled"] [data-test="next-permit"]', { timeout: 15_000 });
    await page.waitForSelector('[data-test="upload"][data-state="done"]', { timeout: 45_000 });
    expect(await card.getAttribute('data-registered')).toBe('12');
    expect(await card.getAttribute('data-failed')).toBe('1');
    expect(navigations).toBe(1);
    // a check of the same sheet says it was uploaded before (the first check of another sheet did not)
    await page.setInputFiles('[data-test="file"]', mine);
    await page.click('[data-test="check"]');
    await page.waitForSelector('[data-test="already-uploaded"]');
    expect(await page.locator('[data-test="upload"]').count()).toBe(1);

    // the result workbook and the rows to fix
    const [report] = await Promise.all([page.waitForEvent('download'), card.locator('[data-test="report"]').click()]);
    const rows = await workbookRows(await report.path());
    const status = rows[0]!.indexOf('status');
    expect(rows.slice(1).map((r) => r[status]).sort()).toEqual([...Array(12).fill('registered'), 'failed'].sort());
    const [fix] = await Promise.all([page.waitForEvent('download'), card.locator('[data-test="failed-only"]').click()]);
    const fixRows = await workbookRows(await fix.path());
    expect(fixRows.length).toBe(2);
    expect(fixRows[1]!.join(' ')).toContain(`category ${BAD_CATEGORY} does not exist`);
  });

  it('the operator page shows every seller live, the pool, the rate against the rule and failures by reason', async () => {
    const page = await newPage();
    const denied = await page.goto(`${s.url}/ops`);
    expect(denied!.status()).toBe(401);
    expect(await page.locator('[data-test="seller"]').count()).toBe(0);

    await page.goto(`${s.url}/ops?token=${OPS_TOKEN}`);
    expect(new URL(page.url()).search).toBe(''); // the token left the address bar
    const cookie = (await page.context().cookies()).find((c) => c.name === 'br_ops')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Strict');
    expect(cookie.value).not.toContain(OPS_TOKEN);

    const sheet = join(FIXTURES_DIR, 'seller-c-7.xlsx');
    await runCli(['upload', sheet, '--seller', 'OPS-A'], s.stage.env);
    await runCli(['upload', join(FIXTURES_DIR, 'seller-b-60-korean.xlsx'), '--seller', 'OPS-B'], s.stage.env);
    await page.waitForSelector('[data-test="seller"][data-seller-id="OPS-A"]');
    await page.waitForSelector('[data-test="seller"][data-seller-id="OPS-B"]');
    // OPS-B sends 60 rows under 10 per 2 s: throttled while the page watches
    await page.waitForSelector('[data-test="seller"][data-seller-id="OPS-B"][data-throttled="1"]', { timeout: 20_000 });
    expect(await page.locator('[data-test="seller"][data-seller-id="OPS-B"] [data-test="rate"]').textContent()).toMatch(/^\d+ \/ 10 per 2s/);
    const pool = page.locator('[data-test="pool"]');
    expect(await pool.getAttribute('data-up')).toBe('2');
    expect(await pool.getAttribute('data-expected')).toBe('2');
    // the refused row of the first test, grouped by its reason
    await page.waitForSelector(`[data-test="failures"] li[data-reason$="category ${BAD_CATEGORY} does not exist"]`);

    // the filter narrows the list; active sellers come first
    const order = await page.$$eval('[data-test="seller"]', (els) => els.map((e) => e.getAttribute('data-seller-id')));
    expect(order[0]).toBe('OPS-B');
    await page.fill('[data-test="filter"]', 'ops-a');
    expect(await page.$$eval('[data-test="seller"]', (els) => els.map((e) => e.getAttribute('data-seller-id')))).toEqual(['OPS-A']);
    await page.waitForSelector('[data-test="seller"][data-seller-id="OPS-A"] [data-test="upload"][data-state="done"]', { timeout: 30_000 });
  });

  it('a tampered or expired link gets 403 and no data', async () => {
    const good = s.sellerLink('WEB1');
    const sig = good.slice(-43);
    const tampered = `${good.slice(0, -43)}${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    const otherSeller = good.replace('/s/WEB1.', '/s/WEB2.');
    const expired = s.sellerLink('WEB1', Date.now() - 1000);
    const page = await newPage();
    for (const link of [tampered, otherSeller, expired]) {
      const res = await page.goto(link);
      expect(res!.status()).toBe(403);
      expect(await page.locator('[data-test="upload"]').count()).toBe(0);
      expect(await page.content()).not.toContain('my products.xlsx');
      const token = link.slice(link.indexOf('/s/') + 3);
      const api = await fetch(`${s.url}/api/uploads?token=${token}`);
      expect(api.status).toBe(403);
      const body = (await api.json()) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['error']);
    }
  });

  it("another seller's uploads are not visible through a seller link", async () => {
    const page = await newPage();
    await page.goto(s.sellerLink('WEB2'));
    await page.waitForSelector('[data-test="live"][data-live="1"]');
    expect(await page.locator('[data-test="upload"]').count()).toBe(0);
    expect(await page.content()).not.toContain('WEB1');
    // the API and the stream, asked for another seller, answer with this seller's scope
    const token = s.sellerLink('WEB2').split('/s/')[1]!;
    const other = (await (await fetch(`${s.url}/api/uploads?seller=WEB1&token=${token}`)).json()) as { uploads: unknown[] };
    expect(other.uploads).toEqual([]);
    const all = (await (await fetch(`${s.url}/api/uploads?seller=WEB1`, { headers: { Authorization: `Bearer ${OPS_TOKEN}` } })).json()) as { uploads: Array<{ uploadId: string }> };
    expect(all.uploads.length).toBeGreaterThan(0);
    const report = await fetch(`${s.url}/api/uploads/${all.uploads[0]!.uploadId}/report?token=${token}`);
    expect(report.status).toBe(404);
    const events = await fetch(`${s.url}/api/events?seller=WEB1&token=${token}`);
    const reader = events.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(first).toContain('event: status');
    expect(first).not.toContain('WEB1');
  });

  it('at phone width (390 px) nothing scrolls sideways, on either page', async () => {
    const page = await newPage({ width: 390 });
    await page.goto(s.sellerLink('WEB1'));
    await page.setInputFiles('[data-test="file"]', join(FIXTURES_DIR, 'with-errors.xlsx'));
    await page.click('[data-test="check"]');
    await page.waitForSelector('[data-test="errors"] [data-row]');
    await page.waitForSelector('[data-test="upload"]');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.goto(`${s.url}/ops?token=${OPS_TOKEN}`);
    await page.waitForSelector('[data-test="seller"]');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });

  it("follows the browser's language, and the switch keeps the choice", async () => {
    const ko = await newPage({ locale: 'ko-KR' });
    await ko.goto(s.sellerLink('WEB1'));
    expect(await ko.getAttribute('html', 'lang')).toBe('ko');
    expect(await ko.locator('[data-test="check"]').textContent()).toBe('검사');
    await ko.waitForSelector('[data-test="upload"]');
    expect(await ko.locator('[data-test="upload"] .badge').first().textContent()).toBe('완료');
    // a bad row's reason and column in Korean, the hooks unchanged
    await ko.setInputFiles('[data-test="file"]', join(FIXTURES_DIR, 'with-errors.xlsx'));
    await ko.click('[data-test="check"]');
    await ko.waitForSelector('[data-test="errors"] [data-row]');
    const reasons = await ko.$$eval('[data-test="errors"] [data-row]', (items) => items.map((li) => ({
      column: li.getAttribute('data-column'), where: li.querySelector('.where')!.textContent!, why: li.querySelector('.why')!.textContent!,
    })));
    expect(reasons.length).toBeGreaterThan(0);
    for (const r of reasons) {
      expect(r.why).toMatch(/[가-힣]/);
      expect(r.why).not.toMatch(/\b(must|required|holds)\b/);
      expect(r.where).toMatch(/^행 \d+ · [가-힣]+$/);
      expect(['sku', 'name', 'price', 'stock', 'category', 'brand', 'description', 'imageUrl']).toContain(r.column);
    }
    // a file refused as a whole: the refusal in Korean too
    await ko.setInputFiles('[data-test="file"]', { name: 'products.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n1 0 obj\n') });
    await ko.click('[data-test="check"]');
    await ko.waitForSelector('[data-test="result"] .error');
    const refusal = await ko.locator('[data-test="result"] .error').textContent();
    expect(refusal).toMatch(/PDF 문서입니다/);
    expect(refusal).not.toMatch(/\b(this|file|workbook|upload)\b/);
    // a sheet read with a warning (a second sku column, under its Korean header): the warning in Korean,
    // the field named by its Korean header
    const repeated = await buildSheet([...ENGLISH_HEADERS, KOREAN_HEADERS[0]!], [['W-1', 'Mug', 12000, 30, 'C0101', 'Acme', 'A mug', 'https://img.example.com/1.jpg', 'W-9']] as never);
    await ko.setInputFiles('[data-test="file"]', { name: 'products.xlsx', mimeType: 'application/octet-stream', buffer: repeated });
    await ko.click('[data-test="check"]');
    await ko.waitForSelector('[data-test="result"] .note');
    const warning = await ko.locator('[data-test="result"] .note').first().textContent();
    expect(warning).toBe('"판매자상품코드" 열은 판매자상품코드 열과 겹칩니다. 첫 번째 열만 읽었습니다.');

    await ko.click('[data-test="lang-en"]');
    expect(await ko.getAttribute('html', 'lang')).toBe('en');
    expect(await ko.locator('[data-test="check"]').textContent()).toBe('Check');
    await ko.goto(s.sellerLink('WEB1')); // no ?lang: the choice is remembered
    expect(await ko.getAttribute('html', 'lang')).toBe('en');

    const en = await newPage({ locale: 'en-US' });
    await en.goto(s.sellerLink('WEB1'));
    expect(await en.getAttribute('html', 'lang')).toBe('en');
    expect(await en.locator('[data-test="register"]').textContent()).toBe('Register');
    // in English the reason does not name its column a second time ("Row 3 · name is required")
    await en.setInputFiles('[data-test="file"]', join(FIXTURES_DIR, 'with-errors.xlsx'));
    await en.click('[data-test="check"]');
    await en.waitForSelector('[data-test="errors"] [data-row]');
    const english = await en.$$eval('[data-test="errors"] [data-row]', (items) => items.map((li) => `${li.querySelector('.where')!.textContent!} ${li.querySelector('.why')!.textContent!}`));
    expect(english.length).toBeGreaterThan(0);
    for (const line of english) expect(line).not.toMatch(/· (\w+) \1 /);
    expect(english.some((line) => /^Row \d+ · \w+ is required$/.test(line))).toBe(true);
    await en.click('[data-test="lang-ko"]');
    expect(await en.locator('[data-test="register"]').textContent()).toBe('등록');
  });

  // last: it leaves 250 more sellers on the stage
  it('shows every seller and every upload when hundreds of sellers upload at once', async () => {
    const SELLERS = 250;
    await uploadMany(s.stage.env, 'MANY', SELLERS, 2);
    const page = await newPage();
    await page.goto(`${s.url}/ops?token=${OPS_TOKEN}`);
    await page.waitForSelector('[data-test="live"][data-live="1"]');
    const count = (sel: string) => page.$$eval(sel, (els) => els.length);
    await page.waitForFunction((n) => document.querySelectorAll('[data-test="seller"][data-seller-id^="MANY-"]').length === n, SELLERS, { timeout: 20_000 });
    expect(await count('[data-test="upload"][data-seller-id^="MANY-"]')).toBe(SELLERS);
    // and they go on updating live until every one is done
    await page.waitForFunction((n) => document.querySelectorAll('[data-test="upload"][data-seller-id^="MANY-"][data-state="done"]').length === n, SELLERS, { timeout: 60_000 });
    expect(await count('[data-test="seller"][data-seller-id^="MANY-"]')).toBe(SELLERS);
    const ids = await page.$$eval('[data-test="seller"]', (els) => els.map((e) => e.getAttribute('data-seller-id')));
    expect(new Set(ids).size).toBe(ids.length);
  }, 120_000);

  // last: it stops the stage's pool
  it('tells a seller, and the operator, that an upload waits because no worker pool runs', async () => {
    for (const pool of s.stage.pools) await pool.stop('SIGTERM');
    expect((await runCli(['upload', join(FIXTURES_DIR, 'seller-c-7.xlsx'), '--seller', 'IDLE'], s.stage.env)).code).toBe(0);
    const seller = await newPage();
    await seller.goto(s.sellerLink('IDLE'));
    const card = seller.locator('[data-test="upload"]');
    await card.locator('[data-test="no-pool"]').waitFor({ timeout: 10_000 });
    expect(await card.getAttribute('data-state')).toBe('waiting');
    expect(await card.locator('[data-test="eta"]').count()).toBe(0);
    const ops = await newPage();
    await ops.goto(`${s.url}/ops?token=${OPS_TOKEN}`);
    await ops.locator('[data-test="seller"][data-seller-id="IDLE"] [data-test="no-pool"]').waitFor({ timeout: 10_000 });
  }, 60_000);
});

