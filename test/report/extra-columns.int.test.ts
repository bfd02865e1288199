/**
 * Extra columns through the producer and the reports, against a real
 * redis-server: the job carries the row's attributes after `product`, and the
 * result workbook and the failed-only file keep every column in its place
 * under the seller's header, so the failed-only file uploads again as it is.
 * Outcomes are written as a worker records them (the rows hash).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { loadConfig, type Config } from '../../src/config.js';
import { REASON_HEADER } from '../../src/excel/fields.js';
import { parseSheetBytes } from '../../src/excel/load-sheet.js';
import { buildSheet, ENGLISH_HEADERS } from '../../src/fixtures/build-sheet.js';
import { QUEUE_NAME, namespaceOf, uploadKeys } from '../../src/keys.js';
import { jobIdFor } from '../../src/queue.js';
import { createRedis, type RedisClient } from '../../src/redis.js';
import { buildReport, readReportRows } from '../../src/report/upload-report.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { enqueueSheet } from '../helpers/uploads.js';

let server: TestRedis;
let redis: RedisClient;
let config: Config;

beforeAll(async () => {
  server = await startRedis();
  config = loadConfig({ REDIS_URL: server.url, QUEUE_PREFIX: '{extra-columns}' });
  redis = createRedis(config, 'cli');
  await redis.connect();
});

afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

// the seller's sheet: Korean headers, the marketplace's columns between and after ours, no brand column
const HEADERS = ['판매자상품코드', '원산지', '상품명', '판매가', '재고수량', '카테고리코드', 'shippingFee', '상세설명', 'certification'];
const ROWS = [
  ['X-1', 'Korea', 'Mug', 12000, 3, 'C1', 2500, 'A mug', 'KC'],
  ['X-2', '', 'Cup', 9000, 1, 'C1', '', '', ''],
  ['X-3', 'Japan', 'Pot', '12.5', 1, 'C1', 0, '', 'JIS'],
  ['X-4', 'China', 'Pan', 5000, 2, 'C9', 3000, 'A pan', ''],
];

const enqueued = async (seller: string, headers = HEADERS, rows: unknown[][] = ROWS) => enqueueSheet(redis, config, seller, await buildSheet(headers, rows as never));

async function rowsOf(bytes: Buffer): Promise<unknown[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(bytes as never);
  const ws = wb.worksheets[0]!;
  const out: unknown[][] = [];
  ws.eachRow((row) => out.push((row.values as unknown[]).slice(1)));
  return out;
}

describe('extra columns', () => {
  it('go into the job after product, only for rows that have any, and the upload id stays the file\'s', async () => {
    const { sheet, uploadId, result } = await enqueued('XC1');
    expect(result.enqueued).toBe(3);
    expect(uploadId).toMatch(/^[0-9a-f]{24}$/);
    const jobKey = (row: number) => `${config.queuePrefix}:${QUEUE_NAME}:${jobIdFor(uploadId, row)}`;
    const first = await redis.hget(jobKey(2), 'data');
    // permit-next.lua reads sellerId, uploadId and row from the front of this JSON
    expect(first).toMatch(new RegExp(`^\\{"sellerId":"XC1","uploadId":"${uploadId}","row":2,"product":\\{`));
    expect(JSON.parse(first!)).toEqual({
      sellerId: 'XC1', uploadId, row: 2,
      product: { sku: 'X-1', name: 'Mug', price: 12000, stock: 3, category: 'C1', description: 'A mug' },
      attributes: { 원산지: 'Korea', shippingFee: '2500', certification: 'KC' },
    });
    expect(Object.keys(JSON.parse(first!))).toEqual(['sellerId', 'uploadId', 'row', 'product', 'attributes']);
    // a row whose extra cells are all empty carries no attributes at all
    expect(Object.keys(JSON.parse((await redis.hget(jobKey(3), 'data'))!))).toEqual(['sellerId', 'uploadId', 'row', 'product']);
    expect(sheet.valid.map((v) => v.row)).toEqual([2, 3, 5]);
  });

  it('stay in their places in the result workbook and the failed-only file, which uploads again as it is', async () => {
    const { uploadId } = await enqueued('XC2');
    const keys = uploadKeys(namespaceOf(config.queuePrefix), 'XC2', uploadId);
    await redis.hset(keys.rows, '2', JSON.stringify({ status: 'registered', productId: 'P1' }), '5', JSON.stringify({ status: 'failed', reason: 'category C9 does not exist' }));

    const found = await readReportRows(redis, config, uploadId);
    const full = await rowsOf(await buildReport(found.rows, { failedOnly: false, columns: found.columns }));
    expect(full[0]).toEqual(['row', ...HEADERS, 'status', 'productId', 'reason']);
    expect(full[1]).toEqual([2, 'X-1', 'Korea', 'Mug', 12000, 3, 'C1', '2500', 'A mug', 'KC', 'registered', 'P1', '']);
    expect(full[2]!.slice(0, 10)).toEqual([3, 'X-2', '', 'Cup', 9000, 1, 'C1', '', '', '']);
    expect(full[2]![10]).toBe('pending');
    expect(full[3]!.slice(0, 10)).toEqual([4, 'X-3', 'Japan', 'Pot', '12.5', 1, 'C1', '0', '', 'JIS']);
    expect(full[3]![10]).toBe('invalid');

    const fixBytes = await buildReport(found.rows, { failedOnly: true, columns: found.columns });
    const fix = await rowsOf(fixBytes);
    expect(fix[0]).toEqual([...HEADERS, REASON_HEADER]);
    expect(fix.slice(1).map((r) => r.slice(0, HEADERS.length))).toEqual([
      ['X-3', 'Japan', 'Pot', '12.5', 1, 'C1', '0', '', 'JIS'],
      ['X-4', 'China', 'Pan', 5000, 2, 'C9', '3000', 'A pan', ''],
    ]);
    expect(fix[1]![HEADERS.length]).toContain('whole number');
    expect(fix[2]![HEADERS.length]).toBe('category C9 does not exist');

    // uploaded again as it is: the same columns, the reason column skipped, nothing to warn about
    const again = await parseSheetBytes(fixBytes, 'fix.xlsx');
    expect(again.columns).toEqual(found.columns);
    expect(again.extraColumns).toEqual(['원산지', 'shippingFee', 'certification']);
    expect(again.warnings).toEqual([]);
    expect(again.errors).toEqual([{ row: 2, column: 'price', message: expect.stringContaining('whole number') }]);
    expect(again.valid).toEqual([{ row: 3, product: { sku: 'X-4', name: 'Pan', price: 5000, stock: 2, category: 'C9', description: 'A pan' }, attributes: { 원산지: 'China', shippingFee: '3000' } }]);
  });

  it('are absent from uploads stored before them: the reports keep the fields by name, as before', async () => {
    const { uploadId } = await enqueued('XC3', ENGLISH_HEADERS, [['O-1', 'Mug', 100, 1, 'C1'], ['O-2', 'Cup', 'x', 1, 'C1']]);
    const keys = uploadKeys(namespaceOf(config.queuePrefix), 'XC3', uploadId);
    const stored = JSON.parse((await redis.get(keys.sheet))!);
    // what enqueue-upload.ts wrote before: no columns, no extra cells
    await redis.set(keys.sheet, JSON.stringify({ raw: stored.raw.map(({ row, values }: { row: number; values: unknown }) => ({ row, values })), errors: stored.errors }));
    const found = await readReportRows(redis, config, uploadId);
    expect(found.columns.map((c) => c.header)).toEqual(ENGLISH_HEADERS);
    const full = await rowsOf(await buildReport(found.rows, { failedOnly: false, columns: found.columns }));
    expect(full[0]).toEqual(['row', ...ENGLISH_HEADERS, 'status', 'productId', 'reason']);
    const fix = await rowsOf(await buildReport(found.rows, { failedOnly: true, columns: found.columns }));
    expect(fix[0]).toEqual([...ENGLISH_HEADERS, REASON_HEADER]);
    expect(fix[1]!.slice(0, 5)).toEqual(['O-2', 'Cup', 'x', 1, 'C1']);
  });
});
