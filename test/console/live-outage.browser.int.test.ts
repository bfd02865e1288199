/**
 * The pages' "live" mark in a real browser (Debian's Chromium) while what feeds
 * it stops: the console's Redis shut down (the server says so on the stream), and
 * the console itself frozen (the stream goes silent and the page notices on its
 * own). Both pages stop calling themselves live, say why in their language, and
 * go live again by themselves, without a reload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { OPS_TOKEN, openBrowserStage, type BrowserStage, type ConsoleStage } from '../helpers/console-stage.js';

let b: BrowserStage;
let s: ConsoleStage;

beforeAll(async () => {
  b = await openBrowserStage({}, 1);
  s = b.stage;
}, 60_000);

afterAll(async () => {
  await b?.close();
});

const newPage = (locale: string) => b.newPage({ locale, width: 390, height: 800 });

const LIVE = '[data-test="live"][data-live="1"]';
const NOT_LIVE = '[data-test="live"][data-live="0"]';
const notice = (page: Page) => page.locator('[data-test="stale"]');

describe('live mark when the feed stops', () => {
  it('goes off with a notice while Redis is shut down or the stream is silent, and back on by itself', async () => {
    const seller = await newPage('en-US');
    await seller.goto(s.sellerLink('LIVE1'));
    const ops = await newPage('ko-KR');
    await ops.goto(`${s.url}/ops?token=${OPS_TOKEN}`);
    for (const page of [seller, ops]) await page.waitForSelector(LIVE, { timeout: 10_000 });

    s.stage.redis.process.kill('SIGTERM'); // a shutdown, as `redis-cli shutdown`
    for (const page of [seller, ops]) await page.waitForSelector(NOT_LIVE, { timeout: 10_000 });
    expect(await notice(seller).isVisible()).toBe(true);
    expect(await notice(seller).textContent()).toContain('cannot reach its database');
    expect(await notice(ops).textContent()).toContain('데이터베이스에 연결할 수 없습니다');

    await s.stage.redis.restart();
    for (const page of [seller, ops]) await page.waitForSelector(LIVE, { timeout: 20_000 });
    expect(await notice(seller).isHidden()).toBe(true);
    expect(await notice(ops).isHidden()).toBe(true);

    // a console that says nothing at all (frozen): the page's own watch takes the mark off
    s.console.child.kill('SIGSTOP');
    try {
      await seller.waitForSelector(NOT_LIVE, { timeout: 15_000 });
      expect(await notice(seller).textContent()).toContain('No update from the console');
    } finally {
      s.console.child.kill('SIGCONT');
    }
    await seller.waitForSelector(LIVE, { timeout: 20_000 });
    expect(await notice(seller).isHidden()).toBe(true);
  }, 120_000);
});
