// `npm run screenshots`: the README's pictures of the console, taken in Debian's
// Chromium (CHROMIUM_PATH, default /usr/bin/chromium) from a real stage: a private
// redis-server, the mock API at 150-250 ms, a worker pool and the console, with a
// few sellers mid-upload. Writes docs/console-seller.png, docs/console-seller-phone.png
// and docs/console-ops.png. Korean text needs a CJK font (Debian: fonts-noto-cjk).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const dist = (p) => import(join(root, 'dist', 'src', p));
const { startRedisServer, freePort } = await dist('dev/redis-server.js');
const { signSellerToken } = await dist('console/access.js');
const { buildProductSheet, sampleProducts } = await dist('fixtures/build-sheet.js');

const BIN = join(root, 'bin', 'bulk-register.js');
const SECRET = 'screenshots-secret-0123456789';
const TOKEN = 'screenshots-operator-0123456789';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = [];

function start(args, env) {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return { child, waitFor: async (re) => { while (!re.test(out)) await sleep(100); } };
}

function run(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: 'ignore' });
    child.on('exit', resolve);
  });
}

const redis = await startRedisServer();
try {
  const apiPort = await freePort();
  const consolePort = await freePort();
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, LOG_PRETTY: '0', METRICS_PORT: '0',
    REDIS_URL: redis.url, REGISTRATION_API_URL: `http://127.0.0.1:${apiPort}`,
    RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '10000', RATE_LIMIT_GUARD_MS: '200',
    CONSOLE_PORT: String(consolePort), CONSOLE_SECRET: SECRET, CONSOLE_OPERATOR_TOKEN: TOKEN,
    MOCK_LATENCY_MS: '150-250', MOCK_INVALID_CATEGORIES: 'C0117',
  };
  await start(['mock-api', '--port', String(apiPort)], env).waitFor(/listening/);
  start(['workers', '--processes', '4'], env);
  await start(['console'], env).waitFor(/console listening/);
  const { writeFileSync, mkdtempSync } = await import('node:fs');
  const dir = mkdtempSync(join((await import('node:os')).tmpdir(), 'br-shots-'));
  const sellers = [['shop-sunrise', 120], ['shop-haneul', 60], ['shop-bada', 35], ['shop-maru', 12]];
  for (const [seller, n] of sellers) {
    const path = join(dir, `${seller}.xlsx`);
    writeFileSync(path, await buildProductSheet(sampleProducts(seller.toUpperCase(), n)));
    await run(['upload', path, '--seller', seller], env);
  }
  await sleep(6000);

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  const link = `http://127.0.0.1:${consolePort}/s/${signSellerToken(SECRET, 'shop-sunrise', Date.now() + 3_600_000)}`;

  const desktop = await browser.newPage({ viewport: { width: 1200, height: 900 }, locale: 'ko-KR' });
  await desktop.goto(link);
  await desktop.setInputFiles('[data-test="file"]', join(root, 'fixtures', 'with-errors.xlsx'));
  await desktop.click('[data-test="check"]');
  await desktop.waitForSelector('[data-test="errors"] [data-row]');
  await desktop.waitForSelector('[data-test="live"][data-live="1"]');
  await desktop.screenshot({ path: join(root, 'docs', 'console-seller.png'), fullPage: true });

  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'en-US' });
  await phone.goto(link);
  await phone.waitForSelector('[data-test="live"][data-live="1"]');
  await phone.screenshot({ path: join(root, 'docs', 'console-seller-phone.png'), fullPage: true });

  const ops = await browser.newPage({ viewport: { width: 1280, height: 1000 }, locale: 'en-US' });
  await ops.goto(`http://127.0.0.1:${consolePort}/ops?token=${TOKEN}`);
  await ops.waitForSelector('[data-test="seller"]');
  await ops.waitForSelector('[data-test="live"][data-live="1"]');
  await ops.waitForSelector('[data-test="failures"] li[data-reason]');
  await ops.screenshot({ path: join(root, 'docs', 'console-ops.png'), fullPage: true });
  await browser.close();
  process.stdout.write('wrote docs/console-seller.png, docs/console-seller-phone.png, docs/console-ops.png\n');
} finally {
  for (const c of children) c.kill('SIGTERM');
  await sleep(500);
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await redis.stop();
}
