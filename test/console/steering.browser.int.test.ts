/**
 * The console's steering in a real browser (Debian's Chromium), against a real
 * Redis, worker pool and mock API: a seller cancels its own upload after a
 * confirmation (and no one else's), the operator pauses and resumes a seller and
 * everyone with a reason, and both pages say when the API is unavailable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { runCli } from '../helpers/cli.js';
import { OPS_TOKEN, openBrowserStage, type BrowserStage, type ConsoleStage } from '../helpers/console-stage.js';
import { signSellerToken } from '../../src/console/access.js';
import { SECRET } from '../helpers/console-stage.js';

let b: BrowserStage;
let s: ConsoleStage;
const dir = mkdtempSync(join(tmpdir(), 'br-steer-'));

beforeAll(async () => {
  b = await openBrowserStage({ QUEUE_PREFIX: '{steer}' });
  s = b.stage;
}, 60_000);

afterAll(async () => {
  await b?.close();
});

const newPage = () => b.newPage();

async function upload(seller: string, rows: number): Promise<string> {
  const file = join(dir, `${seller}.xlsx`);
  writeFileSync(file, await buildProductSheet(sampleProducts(seller, rows)));
  return JSON.parse((await runCli(['upload', file, '--seller', seller, '--json'], s.stage.env)).stdout).uploadId;
}

describe('steering in the console', () => {
  it('a seller cancels its own unfinished upload after a confirmation, and cannot cancel another seller\'s', async () => {
    const mine = await upload('WS1', 60);
    const theirs = await upload('WS9', 60);
    const page = await newPage();
    await page.goto(s.sellerLink('WS1'));
    const card = page.locator(`[data-test="upload"][data-upload-id="${mine}"]`);
    await card.locator('[data-test="cancel"]').click();
    // nothing is sent before the confirmation
    await page.waitForTimeout(500);
    expect(await card.getAttribute('data-state')).not.toBe('cancelled');
    await card.locator('[data-test="confirm"]').click();
    await page.waitForSelector(`[data-test="upload"][data-upload-id="${mine}"][data-state="cancelled"]`, { timeout: 15_000 });
    const shot = join(dir, 'seller-cancelled.png');
    await page.screenshot({ path: shot, fullPage: true });
    const api = await fetch(`${s.url}/api/uploads?seller=WS1`, { headers: { Authorization: `Bearer ${OPS_TOKEN}` } }).then((r) => r.json()) as { uploads: Array<{ uploadId: string; cancelled: number; state: string }> };
    expect(api.uploads.find((u) => u.uploadId === mine)).toMatchObject({ state: 'cancelled' });
    expect(api.uploads.find((u) => u.uploadId === mine)!.cancelled).toBeGreaterThan(0);
    // another seller's upload, through WS1's link: refused
    const token = signSellerToken(SECRET, 'WS1', Date.now() + 600_000);
    const refused = await fetch(`${s.url}/api/uploads/${theirs}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'a seller may cancel only its own uploads.' });
    // and a seller may not pause
    const pause = await fetch(`${s.url}/api/sellers/WS1/pause`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    expect(pause.status).toBe(403);
    expect((await runCli(['cancel', '--upload', theirs], s.stage.env)).code).toBe(0);
  }, 90_000);

  it('the operator pauses a seller with a reason and resumes it, then everyone; the API\'s outage shows on both pages', async () => {
    await upload('WS2', 80);
    await upload('WS3', 80);
    const page = await newPage();
    await page.goto(`${s.url}/ops?token=${OPS_TOKEN}`);
    const seller = page.locator('[data-test="seller"][data-seller-id="WS2"]');
    await seller.waitFor();
    await seller.locator('[data-test="pause-reason"]').fill('maintenance window');
    await seller.locator('[data-test="pause"]').click();
    await page.waitForSelector('[data-test="seller"][data-seller-id="WS2"][data-paused="maintenance window"]', { timeout: 10_000 });
    await page.waitForSelector('[data-test="seller"][data-seller-id="WS2"] [data-test="upload"][data-state="paused"]', { timeout: 10_000 });
    const status = JSON.parse((await runCli(['status', '--seller', 'WS2', '--json'], s.stage.env)).stdout);
    expect(status.sellers[0].paused).toMatchObject({ reason: 'maintenance window', by: 'operator' });
    // the seller's own page says why and by whom
    const ws2 = await newPage();
    await ws2.goto(`${s.sellerLink('WS2')}?lang=en`);
    await ws2.waitForSelector('[data-test="seller-paused"]:not([hidden])', { timeout: 10_000 });
    expect(await ws2.locator('[data-test="seller-paused"]').textContent()).toBe('Registrations for this seller are on hold (paused by the operator: maintenance window)');
    await ws2.close();
    await page.screenshot({ path: join(dir, 'ops-paused.png'), fullPage: true });
    await page.locator('[data-test="seller"][data-seller-id="WS2"] [data-test="resume"]').click();
    await page.waitForFunction(() => !document.querySelector('[data-test="seller"][data-seller-id="WS2"]')?.hasAttribute('data-paused'), undefined, { timeout: 10_000 });

    await page.locator('[data-test="pause-all-reason"]').fill('marketplace maintenance');
    await page.locator('[data-test="pause-all"]').click();
    await page.waitForSelector('[data-test="seller"][data-seller-id="WS3"][data-paused="marketplace maintenance"]', { timeout: 10_000 });
    await page.waitForSelector('[data-test="seller"][data-seller-id="WS2"][data-paused="marketplace maintenance"]', { timeout: 10_000 });
    // one seller resumed while everyone is paused goes on; the others stay paused
    await page.locator('[data-test="seller"][data-seller-id="WS2"] [data-test="resume"]').click();
    await page.waitForFunction(() => !document.querySelector('[data-test="seller"][data-seller-id="WS2"]')?.hasAttribute('data-paused'), undefined, { timeout: 10_000 });
    expect(await page.locator('[data-test="seller"][data-seller-id="WS3"]').getAttribute('data-paused')).toBe('marketplace maintenance');
    await page.locator('[data-test="resume-all"]').click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-test="seller"]')].every((el) => !el.hasAttribute('data-paused')), undefined, { timeout: 10_000 });

    // the API goes down: the pool's breaker opens, and both pages say so until it answers again
    await upload('WS4', 80);
    const outage = (on: boolean) => fetch(`${s.stage.apiUrl}/_outage`, { method: 'PUT', body: JSON.stringify({ on }) });
    await outage(true);
    await page.waitForSelector('[data-test="api"][data-available="0"]', { timeout: 30_000 });
    const sellerPage = await newPage();
    await sellerPage.goto(s.sellerLink('WS4'));
    await sellerPage.waitForSelector('[data-test="api"][data-available="0"]', { timeout: 10_000 });
    expect(await sellerPage.locator('[data-test="api"]').textContent()).toMatch(/unavailable/);
    // an unfinished upload says it is held for the API, not throttled by the rule
    await sellerPage.waitForSelector('[data-test="upload"] [data-test="held"]', { timeout: 10_000 });
    expect(await sellerPage.locator('[data-test="upload"] [data-test="next-permit"]').count()).toBe(0);
    await sellerPage.waitForSelector('[data-test="upload"] [data-test="state"].held', { timeout: 10_000 });
    expect(await sellerPage.locator('[data-test="upload"] [data-test="state"]').textContent()).toBe('held: API unavailable');
    await page.waitForSelector('[data-test="seller"][data-seller-id="WS4"] [data-test="state"].held', { timeout: 10_000 });
    expect(await page.locator('[data-test="seller"][data-seller-id="WS4"] .badge.throttled').count()).toBe(0);
    // the operator's page names the rows without an answer (of whichever upload was sending as the
    // API went down); a seller's page does not
    await page.waitForSelector('[data-test="api"] [data-test="api-failing"]', { timeout: 10_000 });
    expect(await page.locator('[data-test="api-failing"]').textContent()).toMatch(/^Latest rows without an answer: WS\d\.xlsx \(WS\d\) Row \d+(, \d+)*(; |$)/);
    expect(await sellerPage.locator('[data-test="api-failing"]').count()).toBe(0);
    await page.screenshot({ path: join(dir, 'ops-api-down.png'), fullPage: true });
    await outage(false);
    await page.waitForSelector('[data-test="api"][data-available="1"]', { state: 'attached', timeout: 20_000 });
    await sellerPage.waitForSelector('[data-test="api"][data-available="1"]', { state: 'attached', timeout: 20_000 });
    console.log(`screenshots in ${dir}`);
  }, 90_000);
});
