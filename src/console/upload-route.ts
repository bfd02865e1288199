/**
 * POST /api/uploads (console.md): a seller's sheet, checked or enqueued by the
 * same service as `upload`, each in its turn in the intake line (intake.ts).
 */
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { UploadRejected } from '../excel/errors.js';
import { parseSheetBytes } from '../excel/load-sheet.js';
import { stripControls } from '../excel/cell-rules.js';
import { MAX_FILE_BYTES, tooLarge } from '../excel/sniff-file.js';
import { SELLER_ID } from '../keys.js';
import { NotReplicated } from '../upload/replicated.js';
import { submitUpload, type UploadSummary } from '../upload/submit-upload.js';
import { ApiError, invalidSeller, lateUpload, lineFull, REDIS_DOWN } from './api-error.js';
import { IntakeLine, LINE_FULL, type IntakeBounds } from './intake.js';
import { LATE } from './redis-gate.js';
import type { RouteDeps } from './server.js';

/**
 * The intake line's bounds: sheets read and enqueued at once, and how many may wait
 * with how many bytes. Two at once keep the host's CPU busy while one waits for Redis;
 * 1,000 waiting 500-row sheets are about a minute of reading at the bench host's pace.
 */
const INTAKE: IntakeBounds = { size: 2, maxWaiting: 1000, maxWaitingBytes: 256 * 1024 * 1024 };

/** A browser's file name, for display only: never a path. */
export function displayName(name: string): string {
  const base = stripControls(name).split(/[\\/]/).pop()?.trim() ?? '';
  return (base === '' || base === '.' || base === '..' ? 'upload.xlsx' : base).slice(0, 200);
}

const mebibytes = (bytes: number) => `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;

export function addUploadRoute(app: Hono, deps: RouteDeps): void {
  const { config, log, access, gate } = deps;
  const maxBytes = config.console.maxUploadBytes;
  const intake = new IntakeLine(deps.intake ?? INTAKE);

  /** An upload's turn in the line: its sheet read, then checked or enqueued. Throws ApiError for what refuses it. */
  const readAndSubmit = async (file: File, seller: string, dryRun: boolean): Promise<UploadSummary> => {
    let sheet;
    try {
      sheet = await parseSheetBytes(Buffer.from(await file.arrayBuffer()), displayName(file.name));
    } catch (err) {
      if (err instanceof UploadRejected) throw new ApiError(422, err.message);
      throw err;
    }
    const enqueues = !dryRun && sheet.valid.length > 0;
    // not queued for later: a seller told the upload failed must not find it running later
    if (enqueues && !(await gate.ready())) throw new ApiError(503, REDIS_DOWN);
    let answered = false;
    try {
      // a check says whether the file was uploaded before, when Redis is there to ask
      const lookUpEarlier = dryRun && deps.redis.status === 'ready';
      const submitted = submitUpload({ redis: deps.redis, queues: deps.queues, config, now: deps.now }, seller, sheet, { dryRun, config, lookUpEarlier });
      // an answer that comes after the 503 is only logged
      submitted.catch((err: Error) => {
        if (answered) log.warn({ err, sellerId: seller }, 'an upload from the console failed after its request had been answered');
      });
      // only Redis makes it late (a check without the lookup reads none); the turn then passes on
      let summary = await gate.orLate(submitted);
      // a Redis that stopped answering costs a check only what it would have said of an earlier upload
      if (summary === LATE && !enqueues) summary = await submitUpload(undefined, seller, sheet, { dryRun, config });
      if (summary === LATE) throw new ApiError(503, lateUpload(gate.waitMs));
      if (!dryRun && summary.enqueued > 0) log.info({ sellerId: seller, uploadId: summary.uploadId, enqueued: summary.enqueued }, 'upload enqueued from the console');
      return summary;
    } catch (err) {
      if (err instanceof NotReplicated) throw new ApiError(503, err.message);
      throw err;
    } finally {
      answered = true;
    }
  };

  app.post(
    '/api/uploads',
    // who is asking, before any of the body is read: a stranger's upload is refused as such, whatever its size
    async (c, next) => {
      access.requireAccess(c);
      await next();
    },
    bodyLimit({
      maxSize: maxBytes,
      // Connection: close, so that the server drops the rest instead of reading it to keep the connection
      onError: (c) => c.json({ error: `the upload is larger than ${mebibytes(maxBytes)} (${maxBytes} bytes): a sheet of 500 products is far smaller; remove images or split the file.` }, 413, { Connection: 'close' }),
    }),
    async (c) => {
      const scope = access.requireWrite(c, 'uploads are');
      if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('multipart/form-data')) {
        throw new ApiError(422, 'send the sheet as multipart/form-data in the field "file".');
      }
      let form: Record<string, string | File | (string | File)[]>;
      try {
        form = await c.req.parseBody({ all: false });
      } catch {
        throw new ApiError(422, 'the form could not be read: send the sheet as multipart/form-data in the field "file".');
      }
      const file = form.file;
      if (!(file instanceof File)) throw new ApiError(422, 'no sheet was sent: put the .xlsx file in the form field "file".');
      const seller = scope.kind === 'seller' ? scope.sellerId : typeof form.seller === 'string' ? form.seller.trim() : '';
      if (!SELLER_ID.test(seller)) {
        throw new ApiError(422, seller === '' ? 'say which seller the sheet is for: the form field "seller".' : invalidSeller(seller));
      }
      if (file.size > MAX_FILE_BYTES) throw new ApiError(413, tooLarge(file.size).message);
      const dryRun = form.dryRun === '1' || form.dryRun === 'true';
      // Redis away: refused now, not after a turn in line that would only wait for it again
      // (every request shares one wait for Redis; the turns are taken one pair at a time)
      if (!dryRun && !(await gate.ready())) throw new ApiError(503, REDIS_DOWN);
      // read and enqueued in its turn (intake.ts): until then the form's file is its only copy
      const summary = await intake.run(file.size, () => readAndSubmit(file, seller, dryRun));
      if (summary === LINE_FULL) throw new ApiError(503, lineFull(intake.length));
      return c.json(summary, 200);
    },
  );
}
