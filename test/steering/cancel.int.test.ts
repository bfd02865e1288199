/**
 * cancel with real worker processes against the mock API (some answers 503, so
 * some rows wait in a retry's backoff): once `cancel` returns no call for the
 * upload arrives at the API more than 200 ms later (in a loop: this is timing);
 * the rows not sent end cancelled, the rows in flight as answered; uploading the
 * same file again enqueues exactly the cancelled rows and registers nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { runCli, type Running } from '../helpers/cli.js';
import { startStage, type Stage } from '../helpers/pipeline.js';
import { buildProductSheet, sampleProducts } from '../../src/fixtures/build-sheet.js';
import { until } from '../helpers/until.js';

let stage: Stage;
let pool: Running;
const dir = mkdtempSync(join(tmpdir(), 'br-cancel-'));
const GRACE_MS = 200;

type Upload = { uploadId: string; sellerId: string; total: number; registered: number; duplicate: number; failed: number; cancelled: number; pending: number; done: boolean; state: string };


async function status(uploadId: string): Promise<Upload> {
  const res = await runCli(['status', '--upload', uploadId, '--json'], stage.env);
  return JSON.parse(res.stdout).uploads[0];
}

beforeAll(async () => {
  stage = await startStage(
    { RATE_LIMIT_MAX: '30', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_GUARD_MS: '100', QUEUE_PREFIX: '{cancel}' },
    { MOCK_LATENCY_MS: '20-120', MOCK_FAIL_RATE: '0.1' },
  );
  pool = stage.pool(4);
  await pool.waitFor(/worker process ready/);
}, 60_000);

afterAll(async () => {
  await stage?.stop();
});

describe('cancel', () => {
  it('sends no call for the upload 200 ms after cancel returns, every time, counts the rest cancelled, and a re-upload sends exactly them', async () => {
    const late: number[] = [];
    const ids: string[] = [];
    let cancelledAgain: Upload | undefined;
    for (let round = 0; round < 3; round++) {
      const seller = `C${round}`;
      const file = join(dir, `${seller}.xlsx`);
      writeFileSync(file, await buildProductSheet(sampleProducts(seller, 300)));
      const up = await runCli(['upload', file, '--seller', seller, '--json'], stage.env);
      const { uploadId } = JSON.parse(up.stdout);
      ids.push(uploadId);
      await until(`${seller} under way`, async () => ((await stage.stats()).sellers[seller]?.registered ?? 0) >= 30 + round * 20);
      const cancel = await runCli(['cancel', '--upload', uploadId], stage.env);
      const returnedAt = Date.now();
      expect(cancel.code).toBe(0);
      expect(cancel.stdout).toMatch(new RegExp(`^upload ${uploadId} cancelled: \\d+ rows not sent`));
      await new Promise((r) => setTimeout(r, 1500));
      const api = await stage.stats();
      late.push(((api.sellers[seller]?.times ?? []) as number[]).filter((t) => t > returnedAt + GRACE_MS).length);
      await until(`${seller} finished`, async () => (await status(uploadId)).done, 30_000);
      const end = await status(uploadId);
      expect(end).toMatchObject({ state: 'cancelled', pending: 0, failed: 0, duplicate: 0 });
      expect(end.registered + end.cancelled).toBe(300);
      expect(end.cancelled).toBeGreaterThan(100);
      expect(api.sellers[seller]!.registered).toBe(end.registered);

      // a second cancel of a finished upload is no error
      expect((await runCli(['cancel', '--upload', uploadId, '--json'], stage.env)).code).toBe(0);

      if (round === 0) {
        // the report says which rows were cancelled
        const out = join(dir, 'report.xlsx');
        const report = await runCli(['report', '--upload', uploadId, '--out', out], stage.env);
        expect(report.code).toBe(0);
        expect(report.stdout).toContain(`, cancelled ${end.cancelled}, pending 0`);
        const wb = new ExcelJS.Workbook();
        await wb.xlsx.readFile(out);
        const statuses = wb.worksheets[0]!.getSheetValues().flat().map(String);
        expect(statuses.filter((v) => v === 'cancelled').length).toBe(end.cancelled);
        // uploading the same file again sends exactly the cancelled rows
        const again = JSON.parse((await runCli(['upload', file, '--seller', seller, '--json'], stage.env)).stdout);
        expect(again).toMatchObject({ uploadId, enqueued: end.cancelled, alreadyUploaded: true });
        await until('re-upload finished', async () => (await status(uploadId)).done, 60_000);
        expect(await status(uploadId)).toMatchObject({ registered: 300, cancelled: 0, failed: 0, duplicate: 0, state: 'done' });
        const after = await stage.stats();
        expect(after.sellers[seller]).toMatchObject({ registered: 300, tooMany: 0 });
        // the same file once more: nothing left to send
        expect(JSON.parse((await runCli(['upload', file, '--seller', seller, '--json'], stage.env)).stdout)).toMatchObject({ enqueued: 0, alreadyUploaded: true });
      }
      if (round === 1) {
        // uploaded again, then cancelled again: a second end, with a finished line and an event of its own
        const again = JSON.parse((await runCli(['upload', file, '--seller', seller, '--json'], stage.env)).stdout);
        expect(again).toMatchObject({ uploadId, enqueued: end.cancelled });
        await until(`${seller} under way again`, async () => ((await stage.stats()).sellers[seller]?.registered ?? 0) >= end.registered + 20);
        expect((await runCli(['cancel', '--upload', uploadId], stage.env)).code).toBe(0);
        await until(`${seller} finished again`, async () => (await status(uploadId)).done, 30_000);
        cancelledAgain = await status(uploadId);
        expect(cancelledAgain).toMatchObject({ state: 'cancelled', pending: 0 });
        expect(cancelledAgain.registered).toBeGreaterThan(end.registered);
      }
    }
    expect(late).toEqual([0, 0, 0]);
    const logs = pool.output();
    expect(logs).toMatch(/"cancelled":\d+[^\n]*"msg":"upload finished"|"msg":"upload finished"[^\n]*"cancelled"/);
    // one finished line for each end of an upload, none twice; the last with its final counts
    const finished = (id: string) => logs.split('\n').filter((l) => l.includes('"msg":"upload finished"') && l.includes(id)).map((l) => JSON.parse(l) as Upload);
    expect(ids.map((id) => finished(id).length)).toEqual([2, 2, 1]);
    expect(finished(ids[1]!).at(-1)).toMatchObject({ registered: cancelledAgain!.registered, cancelled: cancelledAgain!.cancelled });
    // and an event for each of the two cancels, under ids of their own
    await until('the second cancel\'s event', () => pool.output().includes(`"webhookId":"msg_upload.cancelled-${ids[1]}-2"`), 10_000);
    expect(pool.output()).toContain(`"webhookId":"msg_upload.cancelled-${ids[1]}"`);
  }, 240_000);

  it('leaves an upload that is already done as it is: exit 0, says so, still done', async () => {
    const file = join(dir, 'D1.xlsx');
    writeFileSync(file, await buildProductSheet(sampleProducts('D1', 5)));
    const { uploadId } = JSON.parse((await runCli(['upload', file, '--seller', 'D1', '--json'], stage.env)).stdout);
    await until('D1 done', async () => (await status(uploadId)).done, 30_000);
    const before = await status(uploadId);
    const cancel = await runCli(['cancel', '--upload', uploadId], stage.env);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`upload ${uploadId} was already done: nothing to cancel (${before.registered} registered, ${before.duplicate} duplicate, ${before.failed} failed).\n`);
    expect(await status(uploadId)).toEqual({ ...before, state: 'done' });
    const json = JSON.parse((await runCli(['cancel', '--upload', uploadId, '--json'], stage.env)).stdout);
    expect(json).toMatchObject({ uploadId, state: 'done', cancelled: 0 });
  });

  it('answers an unknown upload with exit 1 and one sentence', async () => {
    const res = await runCli(['cancel', '--upload', 'ffffffffffffffffffffffff'], stage.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('No upload ffffffffffffffffffffffff: check the id with `bulk-register status`.\n');
    // an id no upload can have is an unknown upload too (status answers it with 1 as well)
    const malformed = await runCli(['cancel', '--upload', 'x y'], stage.env);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toBe('No upload "x y": an upload id is the one `upload` or `status` printed.\n');
    expect((await runCli(['status', '--upload', 'x y'], stage.env)).code).toBe(1);
  });
});
