/**
 * A whole console stage with real processes: a private redis-server, the mock
 * API (150-250 ms, one category it refuses), a worker pool and
 * `bulk-register console`; plus Debian's Chromium driven by playwright-core.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { signSellerToken } from '../../src/console/access.js';
import { startCli, type Running, poolReady } from './cli.js';
import { freePort } from './redis-server.js';
import { startStage, type Stage } from './pipeline.js';

export const SECRET = 'test-console-secret-0123456789';
export const OPS_TOKEN = 'test-operator-token-0123456789';
/** The mock API answers 422 for this category: a row that fails with a reason. */
export const BAD_CATEGORY = 'C0999';

export interface ConsoleStage {
  stage: Stage;
  console: Running;
  url: string;
  sellerLink(sellerId: string, expiresAt?: number): string;
  stop(): Promise<void>;
}

export async function startConsoleStage(env: Record<string, string> = {}, processes = 2): Promise<ConsoleStage> {
  const stage = await startStage(
    { RATE_LIMIT_MAX: '10', RATE_LIMIT_WINDOW_MS: '2000', RATE_LIMIT_GUARD_MS: '100', CONSOLE_SECRET: SECRET, CONSOLE_OPERATOR_TOKEN: OPS_TOKEN, ...env },
    { MOCK_LATENCY_MS: '150-250', MOCK_INVALID_CATEGORIES: BAD_CATEGORY },
  );
  const pool = stage.pool(processes);
  const port = await freePort();
  const consoleProcess = startCli(['console', '--port', String(port)], stage.env);
  await consoleProcess.waitFor(/console listening/);
  await poolReady(pool, processes);
  const url = `http://127.0.0.1:${port}`;
  return {
    stage,
    console: consoleProcess,
    url,
    sellerLink: (sellerId, expiresAt = Date.now() + 3_600_000) => `${url}/s/${signSellerToken(SECRET, sellerId, expiresAt)}`,
    async stop() {
      await consoleProcess.stop();
      await stage.stop();
    },
  };
}

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH); .ci/run installs it`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

export interface PageOptions {
  locale?: string;
  width?: number;
  height?: number;
}

/** A console stage and a browser for one test file; each page opens in a context of its own, closed with the rest. */
export interface BrowserStage {
  stage: ConsoleStage;
  /** A page (English, 1200 × 900 unless told) that fails the test on any script error; downloads accepted. */
  newPage(opts?: PageOptions): Promise<Page>;
  close(): Promise<void>;
}

export async function openBrowserStage(env: Record<string, string> = {}, processes = 2): Promise<BrowserStage> {
  const stage = await startConsoleStage(env, processes);
  const browser = await launchBrowser().catch(async (err: unknown) => {
    await stage.stop();
    throw err;
  });
  const contexts: BrowserContext[] = [];
  return {
    stage,
    async newPage(opts = {}) {
      const context = await browser.newContext({
        locale: opts.locale ?? 'en-US',
        viewport: { width: opts.width ?? 1200, height: opts.height ?? 900 },
        acceptDownloads: true,
      });
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (err) => { throw err; });
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
      await stage.stop();
    },
  };
}
