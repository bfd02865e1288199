/**
 * What a seller and an operator get from a real run: the per-row report and the
 * rows to fix, the live status view as plain lines, seller tiers, and the
 * pool's metrics and health endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { buildSheet, ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { freePort } from '../helpers/redis-server.js';
import { runCli, type Running } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';

let stage: Stage;
let pool: Running;
let metricsPort: number;
const dir = mkdtempSync(join(tmpdir(), 'br-report-'));

beforeAll(async () => {
  metricsPort = await freePort();
  stage = await startStage(
    { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '50', QUEUE_PREFIX: '{seller-out}' },
    { MOCK_INVALID_CATEGORIES: 'C9999', MOCK_LATENCY_MS: '2-10' },
  );
  pool = stage.pool(2, { METRICS_PORT: String(metricsPort) });
  await pool.waitFor(/metrics listening/);
});
afterAll(async () => { await stage?.stop(); });

async function sheetFile(name: string, rows: unknown[][]): Promise<string> {
  const path = join(dir, name);
  writeFileSync(path, await buildSheet(ENGLISH_HEADERS, rows as never));
  return path;
}

describe('seller and operator outputs', () => {
  it('writes a per-row report and a file of only the rows to fix, never as formulas', async () => {
    const first = await sheetFile('first.xlsx', [['DUP-1', 'Existing', 1000, 1, 'C0101']]);
    expect((await runCli(['upload', first, '--seller', 'R1'], stage.env)).code).toBe(0);
    await runCli(['status', '--seller', 'R1', '--wait'], stage.env);

    const path = await sheetFile('report-me.xlsx', [
      ['OK-1', 'Mug', 1000, 1, 'C0101'],
      ['BAD-CAT', 'Cup', 1000, 1, 'C9999'],
      ['BAD-PRICE', 'Pot', '12.5', 1, 'C0101'],
      ['FORMULA', '=HYPERLINK("http://evil.example","x")', 1000, 1, 'C0101', '+cmd', '-1', ''],
      ['DUP-1', 'Again', 1000, 1, 'C0101'],
    ]);
    const up = JSON.parse((await runCli(['upload', path, '--seller', 'R1', '--json'], stage.env)).stdout);
    expect(up.enqueued).toBe(4);
    await runCli(['status', '--upload', up.uploadId, '--wait'], stage.env);

    const full = join(dir, 'full.xlsx');
    const r = await runCli(['report', '--upload', up.uploadId, '--out', full], stage.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('registered 2, duplicate 1, failed 1, invalid 1, pending 0');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(full);
    const ws = wb.worksheets[0]!;
    const header = (ws.getRow(1).values as unknown[]).slice(1);
    expect(header).toEqual(['row', ...ENGLISH_HEADERS, 'status', 'productId', 'reason']);
    const rows = [2, 3, 4, 5, 6].map((n) => (ws.getRow(n).values as unknown[]).slice(1));
    const byRow = Object.fromEntries(rows.map((v) => [v[0], { status: v[9], productId: v[10], reason: v[11] }]));
    expect(byRow[2]).toMatchObject({ status: 'registered', productId: expect.stringMatching(/^P/) });
    expect(byRow[3]).toMatchObject({ status: 'failed', reason: 'category C9999 does not exist' });
    expect(byRow[4]).toMatchObject({ status: 'invalid', reason: expect.stringContaining('whole number') });
    expect(byRow[5]).toMatchObject({ status: 'registered' });
    expect(byRow[6]).toMatchObject({ status: 'duplicate', productId: expect.stringMatching(/^P/) });
    const injected = ws.getRow(5).getCell(3);
    expect(injected.type).toBe(ExcelJS.ValueType.String);
    expect(injected.value).toBe('=HYPERLINK("http://evil.example","x")');
    expect(ws.getRow(5).getCell(7).type).toBe(ExcelJS.ValueType.String);

    const fix = join(dir, 'fix.xlsx');
    expect((await runCli(['report', '--upload', up.uploadId, '--out', fix, '--failed-only'], stage.env)).code).toBe(0);
    const again = await parseSheetBytes(readFileSync(fix), 'fix.xlsx');
    expect(again.rows).toBe(2);
    expect(again.valid.map((v) => v.product.sku)).toEqual(['BAD-CAT']);
    expect(again.errors).toEqual([{ row: 3, column: 'price', message: expect.stringContaining('whole number') }]);
    // the reason column is the report's own: skipped, not taken for a marketplace column
    expect(again.extraColumns).toEqual([]);
    expect(again.warnings).toEqual([]);
  });

  it('follows a seller tier in the limiter and status, and shows the live view as plain lines', async () => {
    expect((await runCli(['limits', 'set', 'TIER', '2', '--window-ms', '1000'], stage.env)).code).toBe(0);
    const list = JSON.parse((await runCli(['limits', 'list', '--json'], stage.env)).stdout);
    expect(list.sellers).toEqual([{ sellerId: 'TIER', max: 2, windowMs: 1000 }]);

    const path = await sheetFile('tier.xlsx', Array.from({ length: 8 }, (_, i) => [`T-${i}`, 'Tiered', 1000, 1, 'C0101']));
    expect((await runCli(['upload', path, '--seller', 'TIER'], stage.env)).code).toBe(0);
    const watch = await runCli(['status', '--seller', 'TIER', '--watch', '--wait'], stage.env, 60_000);
    expect(watch.code).toBe(0);
    const lines = watch.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const l of lines) expect(l).toMatch(/^\d\d:\d\d:\d\d TIER [0-9a-f]{8} \d+\/8 registered \d+ duplicate 0 failed 0 pending \d+ \| \d+\/min \(limit 2\/1s\) \| (next permit in \d+s|sending|done) \| ETA \d+s( \((rule|pool) sets the pace\))?$/);
    expect(lines.at(-1)).toContain('8/8');
    expect(lines.some((l) => l.includes('next permit in'))).toBe(true);
    // 2 per second for 8 rows on an idle pool: the rule holds this seller back
    expect(lines.some((l) => l.includes('(rule sets the pace)'))).toBe(true);

    const stats = await stage.stats();
    expect(stats.sellers.TIER).toMatchObject({ registered: 8, tooMany: 0 });
    // 8 rows at 2 per 1.05 s: the tier, not the default 5 per second, paced them
    expect(stats.sellers.TIER!.maxInWindow).toBeLessThanOrEqual(2);
    expect((await runCli(['limits', 'reset', 'TIER'], stage.env)).stdout).toContain('back to the default rule');
  });

  it('serves Prometheus metrics aggregated over the worker processes, and /healthz', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    // 1 + 2 rows of R1 and 8 of TIER registered, R1's duplicate and its unknown category
    expect(text).toMatch(/bulk_register_registrations_total\{outcome="registered"\} 11/);
    expect(text).toMatch(/bulk_register_registrations_total\{outcome="duplicate"\} 1/);
    expect(text).toMatch(/bulk_register_registrations_total\{outcome="failed"\} 1/);
    expect(text).toMatch(/bulk_register_worker_up\{slot="0"\} 1/);
    expect(text).toMatch(/bulk_register_worker_up\{slot="1"\} 1/);
    expect(text).toMatch(/bulk_register_limiter_wait_seconds_count \d+/);
    expect(text).toMatch(/bulk_register_queue_jobs\{state="delayed"\} 0/);
    expect(text).toMatch(/bulk_register_api_429_total 0/);
    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, redis: 'up', workers: 2, expected: 2 });
  });
});
