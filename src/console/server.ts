/**
 * The console's routes (console.md): the seller page, the operator page and
 * the JSON API, on hono. Access is decided in access.ts; the live stream comes
 * from one shared LiveFeed; sheets go through the same check-and-enqueue
 * service as `upload`. Every error answers `{"error": one sentence}`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import { streamSSE } from 'hono/streaming';
import { ConfigError, type Config } from '../config.js';
import { UploadRejected } from '../excel/errors.js';
import { parseSheetBytes } from '../excel/load-sheet.js';
import { stripControls } from '../excel/cell-rules.js';
import { MAX_FILE_BYTES, tooLarge } from '../excel/sniff-file.js';
import { SELLER_ID } from '../keys.js';
import type { Logger } from '../logger.js';
import { PACKAGE_ROOT } from '../paths.js';
import type { QueueSet } from '../queue.js';
import type { RedisClient } from '../redis.js';
import { buildReport, readReportRows, UnknownUpload } from '../report/upload-report.js';
import { buildTemplate } from '../report/template.js';
import { loadTemplateColumns, type TemplateColumn } from '../report/template-columns.js';
import { NotReplicated } from '../upload/replicated.js';
import { submitUpload, type UploadSummary } from '../upload/submit-upload.js';
import { IntakeLine, LINE_FULL, type IntakeBounds } from './intake.js';
import { hostNameOf, isLoopbackHost, operatorSession, sameSecret, verifySellerToken, writeAllowed } from './access.js';
import { LiveFeed, viewSender } from './live.js';
import { messagePage, operatorPage, sellerPage } from './pages/pages.js';
import { pickLang, STRINGS, type Lang } from './pages/i18n.js';
import type { ConsoleSnapshot, SnapshotReader } from './snapshot.js';
import { viewOf, type Scope } from './views.js';
import { cancelUpload, sellerOfUpload } from '../steering/cancel.js';
import { ALL, pauseReason, pauseSeller, resumeSeller } from '../steering/pauses.js';
import { limiterFor, readStatus, sellerStatusJson, statusJson } from '../progress/status.js';
import { namespaceOf } from '../keys.js';

export const OPS_COOKIE = 'br_ops';
const LANG_COOKIE = 'br_lang';
/** The SSE stream sends a client's view on change, and at least this often. */
export const HEARTBEAT_MS = 1500;
/**
 * How long a request waits for a Redis that is connected but does not answer (frozen,
 * or failing over) before it gets 503. One whose connection is not ready gets 503 after
 * READY_WAIT_MS: the console's connection waits for Redis forever (for the live feed),
 * and a request queued behind it would hang and then take effect long after its client
 * gave up.
 */
export const REDIS_WAIT_MS = 10_000;
/**
 * How long a request waits for a connection that is not ready (the console just
 * started, or Redis is reconnecting) before it gets 503: a start-up race is not
 * an outage, and a Redis that is down is said so within this.
 */
export const READY_WAIT_MS = 2000;

export interface ConsoleDeps {
  redis: RedisClient;
  queues: QueueSet;
  config: Config;
  log: Logger;
  reader: SnapshotReader;
  feed: LiveFeed<ConsoleSnapshot>;
  now: () => number;
  /** REDIS_WAIT_MS unless given (tests). */
  redisWaitMs?: number;
  /** The intake line's bounds unless given (tests). */
  intake?: IntakeBounds;
}

/** A request's access, or the status and sentence that refuse it. */
type AccessResult = { ok: true; scope: Scope; tokenInHeader: boolean; expiresAt?: number } | { ok: false; status: 401 | 403; error: string };

class ApiError extends Error {
  constructor(readonly status: 400 | 401 | 403 | 404 | 413 | 422 | 500 | 503, message: string) {
    super(message);
  }
}

// The API's sentences a seller's page can meet (the Korean page translates them: assets/row-reasons.js).
export const REDIS_DOWN = 'Redis does not answer: the console can neither read nor change anything until it does; try again in a moment.';
/** An upload that was sent to Redis before it stopped answering may still be queued once it answers again. */
export const lateUpload = (ms: number) => `Redis did not answer within ${ms / 1000} s: the sheet may still be queued once it answers. Look at your uploads before sending it again (sending the same file again queues nothing twice).`;

/** A sheet posted while the intake line (intake.ts) holds as many as it may. */
export const lineFull = (waiting: number) => `the console has ${waiting} sheets waiting to be read before this one could be: nothing of it was queued; send it again in a minute.`;

export const INTERNAL_ERROR = 'the console could not answer (an internal error was logged): try again in a moment.';
export const LINKS_OFF = 'seller links are off on this console (CONSOLE_SECRET is not set): ask the operator.';
export const LINK_EXPIRED = 'this seller link has expired: ask the operator for a new one.';
export const LINK_INVALID = 'this seller link is not valid: ask the operator for a new one.';
export const OTHERS_UPLOAD = 'a seller may cancel only its own uploads.';
export const unknownUpload = (uploadId: string) => `no upload ${JSON.stringify(uploadId.slice(0, 80))} is known: check the id.`;

const mebibytes = (bytes: number) => `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;

const NO_STORE = { 'Cache-Control': 'no-store' };
/**
 * The intake line (intake.ts): sheets read and enqueued at once, and how many may wait
 * with how many bytes. Two at once keep the host's CPU busy while one waits for Redis;
 * 1,000 waiting 500-row sheets are about a minute of reading at the bench host's pace.
 */
const INTAKE: IntakeBounds = { size: 2, maxWaiting: 1000, maxWaitingBytes: 256 * 1024 * 1024 };
/** What orLate gives for work that took longer than the wait. */
const LATE = Symbol('late');

const ASSET_TYPES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'row-reasons.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** A browser's file name, for display only: never a path. */
export function displayName(name: string): string {
  const base = stripControls(name).split(/[\\/]/).pop()?.trim() ?? '';
  return (base === '' || base === '.' || base === '..' ? 'upload.xlsx' : base).slice(0, 200);
}

export function createConsoleApp(deps: ConsoleDeps): Hono {
  const { config, log } = deps;
  const opts = config.console;
  const openLocal = opts.operatorToken === '' && isLoopbackHost(opts.host);
  const redisWaitMs = deps.redisWaitMs ?? REDIS_WAIT_MS;
  // one wait for 'ready' shared by every request that comes while the connection is not
  let readyWait: Promise<boolean> | undefined;
  const redisReady = (): Promise<boolean> => {
    if (deps.redis.status === 'ready') return Promise.resolve(true);
    readyWait ??= new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        deps.redis.off('ready', onReady);
        readyWait = undefined;
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(deps.redis.status === 'ready'), Math.min(READY_WAIT_MS, redisWaitMs));
      deps.redis.on('ready', onReady);
    });
    return readyWait;
  };
  /** `work`'s result, or LATE once it has taken redisWaitMs (it goes on; its result is then dropped). */
  const orLate = <T>(work: Promise<T>): Promise<T | typeof LATE> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => { timer = setTimeout(() => resolve(LATE), redisWaitMs); });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  };
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
    if (enqueues && !(await redisReady())) throw new ApiError(503, REDIS_DOWN);
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
      let summary = await orLate(submitted);
      // a Redis that stopped answering costs a check only what it would have said of an earlier upload
      if (summary === LATE && !enqueues) summary = await submitUpload(undefined, seller, sheet, { dryRun, config });
      if (summary === LATE) throw new ApiError(503, lateUpload(redisWaitMs));
      if (!dryRun && summary.enqueued > 0) log.info({ sellerId: seller, uploadId: summary.uploadId, enqueued: summary.enqueued }, 'upload enqueued from the console');
      return summary;
    } catch (err) {
      if (err instanceof NotReplicated) throw new ApiError(503, err.message);
      throw err;
    } finally {
      answered = true;
    }
  };
  const app = new Hono();

  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
      xContentTypeOptions: 'nosniff',
      xFrameOptions: 'DENY',
      crossOriginResourcePolicy: 'same-origin',
      // plain HTTP on a loopback address is the default; HSTS belongs to the TLS proxy in front
      strictTransportSecurity: false,
    }),
  );

  app.onError((err, c) => {
    if (err instanceof ApiError) return c.json({ error: err.message }, err.status);
    log.error({ err }, 'console request failed');
    return c.json({ error: INTERNAL_ERROR }, 500);
  });
  app.notFound((c) => c.json({ error: `there is no ${c.req.method} ${c.req.path} here: see console.md for the pages and the API.` }, 404));

  const langOf = (c: Context): Lang => {
    const asked = c.req.query('lang');
    if (asked === 'ko' || asked === 'en') {
      setCookie(c, LANG_COOKIE, asked, { path: '/', sameSite: 'Strict', httpOnly: true, maxAge: 365 * 86_400 });
      return asked;
    }
    return pickLang(getCookie(c, LANG_COOKIE), c.req.header('accept-language'));
  };

  // Redis away: a request that reads or writes it answers 503 once the connection has not been
  // ready for READY_WAIT_MS, and one that waits on a Redis that does not answer gets 503 after
  // REDIS_WAIT_MS; a page says so in the seller's language.
  // POST /api/uploads decides for itself (a check reads no Redis).
  const isPage = (path: string) => path === '/ops' || path.startsWith('/s/');
  app.use('*', async (c, next) => {
    const path = c.req.path;
    const api = path.startsWith('/api/') && path !== '/api/template' && path !== '/api/events' && !(path === '/api/uploads' && c.req.method === 'POST');
    if (!api && !isPage(path)) return next();
    const refuse = () => {
      if (!isPage(path)) return c.json({ error: REDIS_DOWN }, 503);
      const lang = langOf(c);
      return c.html(messagePage(lang, STRINGS[lang].redisDown), 503);
    };
    if (!(await redisReady())) return refuse();
    if ((await orLate(next())) === LATE) return refuse();
  });

  const sellerAccess = (token: string): AccessResult => {
    if (opts.secret === '') return { ok: false, status: 403, error: LINKS_OFF };
    const check = verifySellerToken(opts.secret, token, deps.now());
    if (!check.ok) {
      return { ok: false, status: 403, error: check.reason === 'expired' ? LINK_EXPIRED : LINK_INVALID };
    }
    return { ok: true, scope: { kind: 'seller', sellerId: check.sellerId }, tokenInHeader: false, expiresAt: check.expiresAt };
  };

  /** Bearer (operator token or seller token), a seller token in the query, the operator cookie, or open local access. */
  const accessOf = (c: Context): AccessResult => {
    const auth = c.req.header('authorization');
    if (auth !== undefined) {
      const m = /^Bearer\s+(\S+)$/i.exec(auth.trim());
      if (!m) return { ok: false, status: 401, error: 'the Authorization header must be "Bearer <token>".' };
      const token = m[1]!;
      if (opts.operatorToken !== '' && sameSecret(token, opts.operatorToken)) return { ok: true, scope: { kind: 'operator' }, tokenInHeader: true };
      if (token.includes('.')) {
        const seller = sellerAccess(token);
        return seller.ok ? { ...seller, tokenInHeader: true } : seller;
      }
      return { ok: false, status: 403, error: 'the token is not valid for this console.' };
    }
    const queryToken = c.req.query('token');
    if (queryToken !== undefined) return sellerAccess(queryToken);
    const cookie = getCookie(c, OPS_COOKIE);
    if (cookie !== undefined && opts.operatorToken !== '') {
      if (sameSecret(cookie, operatorSession(opts.operatorToken))) return { ok: true, scope: { kind: 'operator' }, tokenInHeader: false };
    }
    // open access is for this machine only: a page elsewhere whose name was made to point here
    // (DNS rebinding) sends its own name as Host, and gets nothing
    if (openLocal) {
      if (isLoopbackHost(hostNameOf(c.req.header('host')))) return { ok: true, scope: { kind: 'operator' }, tokenInHeader: false };
      return { ok: false, status: 403, error: 'this console has no operator token and answers only at a loopback address (127.0.0.1, localhost or [::1]): open it there, or set CONSOLE_OPERATOR_TOKEN.' };
    }
    return { ok: false, status: 401, error: 'sign in: send "Authorization: Bearer <token>", or open /ops?token=<token> (operators) or your seller link.' };
  };

  const requireAccess = (c: Context): { scope: Scope; tokenInHeader: boolean; expiresAt?: number } => {
    const a = accessOf(c);
    if (!a.ok) throw new ApiError(a.status, a.error);
    return a;
  };

  /** An operator may narrow to one seller; a seller sees only itself. */
  const scopeWith = (scope: Scope, seller: string | undefined): Scope => {
    if (scope.kind === 'seller' || seller === undefined || seller === '') return scope;
    if (!SELLER_ID.test(seller)) throw new ApiError(400, `seller ${JSON.stringify(seller.slice(0, 80))} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -.`);
    return { kind: 'operator', sellerId: seller };
  };

  app.get('/healthz', async (c) => {
    const ok = await Promise.race([deps.redis.ping().then(() => true, () => false), new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref())]);
    return ok ? c.json({ ok: true, redis: 'up' }) : c.json({ error: 'Redis does not answer: the console cannot read or enqueue until it does.' }, 503);
  });

  const assets = new Map<string, string>();
  app.get('/assets/:name', async (c) => {
    const name = c.req.param('name');
    const type = ASSET_TYPES[name];
    if (!type) throw new ApiError(404, `there is no asset ${JSON.stringify(name.slice(0, 80))}.`);
    let body = assets.get(name);
    if (body === undefined) {
      body = await readFile(join(PACKAGE_ROOT, 'src', 'console', 'assets', name), 'utf8');
      assets.set(name, body);
    }
    return c.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'no-cache' });
  });

  app.get('/', (c) => c.redirect('/ops', 302));
  app.get('/favicon.ico', (c) => c.body(null, 204));

  app.get('/ops', async (c) => {
    const lang = langOf(c);
    const token = c.req.query('token');
    if (token !== undefined) {
      if (opts.operatorToken === '' || !sameSecret(token, opts.operatorToken)) {
        return c.html(messagePage(lang, STRINGS[lang].signIn), 403);
      }
      setCookie(c, OPS_COOKIE, operatorSession(opts.operatorToken), {
        path: '/', httpOnly: true, sameSite: 'Strict', secure: new URL(c.req.url).protocol === 'https:', maxAge: 12 * 3600,
      });
      // the token leaves the address bar (and the history)
      return c.redirect('/ops', 303);
    }
    const a = accessOf(c);
    if (!a.ok || a.scope.kind !== 'operator') return c.html(messagePage(lang, STRINGS[lang].signIn), a.ok ? 403 : a.status);
    return c.html(operatorPage(lang, viewOf(await deps.reader.read(), a.scope)), 200, NO_STORE);
  });

  app.get('/s/:token', async (c) => {
    const lang = langOf(c);
    const token = c.req.param('token');
    const a = sellerAccess(token);
    if (!a.ok || a.scope.kind !== 'seller') return c.html(messagePage(lang, STRINGS[lang].forbidden), 403);
    const sellerId = a.scope.sellerId;
    // the page holds the link's token and the seller's data: no cache keeps it
    return c.html(sellerPage(lang, token, sellerId, viewOf(await deps.reader.read({ sellerId }), a.scope)), 200, NO_STORE);
  });

  app.get('/api/uploads', async (c) => {
    const scope = scopeWith(requireAccess(c).scope, c.req.query('seller'));
    return c.json(viewOf(await deps.reader.read(scope.sellerId ? { sellerId: scope.sellerId } : {}), scope));
  });

  app.post(
    '/api/uploads',
    // who is asking, before any of the body is read: a stranger's upload is refused as such, whatever its size
    async (c, next) => {
      requireAccess(c);
      await next();
    },
    bodyLimit({
      maxSize: opts.maxUploadBytes,
      // Connection: close, so that the server drops the rest instead of reading it to keep the connection
      onError: (c) => c.json({ error: `the upload is larger than ${mebibytes(opts.maxUploadBytes)} (${opts.maxUploadBytes} bytes): a sheet of 500 products is far smaller; remove images or split the file.` }, 413, { Connection: 'close' }),
    }),
    async (c) => {
      const { scope, tokenInHeader } = requireAccess(c);
      const headers = { origin: c.req.header('origin'), host: c.req.header('host'), secFetchSite: c.req.header('sec-fetch-site') };
      if (!writeAllowed(headers, tokenInHeader || openLocal)) throw new ApiError(403, 'uploads are accepted only from the console\'s own pages (or with a token in the Authorization header).');
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
        throw new ApiError(422, seller === '' ? 'say which seller the sheet is for: the form field "seller".' : `seller ${JSON.stringify(seller.slice(0, 80))} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -.`);
      }
      if (file.size > MAX_FILE_BYTES) throw new ApiError(413, tooLarge(file.size).message);
      const dryRun = form.dryRun === '1' || form.dryRun === 'true';
      // Redis away: refused now, not after a turn in line that would only wait for it again
      // (every request shares one wait for Redis; the turns are taken one pair at a time)
      if (!dryRun && !(await redisReady())) throw new ApiError(503, REDIS_DOWN);
      // read and enqueued in its turn (intake.ts): until then the form's file is its only copy
      const summary = await intake.run(file.size, () => readAndSubmit(file, seller, dryRun));
      if (summary === LINE_FULL) throw new ApiError(503, lineFull(intake.length));
      return c.json(summary, 200);
    },
  );

  /** A write (cancel, pause, resume) with the scope's rights and from the console's own pages. */
  const requireWrite = (c: Context): Scope => {
    const { scope, tokenInHeader } = requireAccess(c);
    const headers = { origin: c.req.header('origin'), host: c.req.header('host'), secFetchSite: c.req.header('sec-fetch-site') };
    if (!writeAllowed(headers, tokenInHeader || openLocal)) throw new ApiError(403, 'changes are accepted only from the console\'s own pages (or with a token in the Authorization header).');
    return scope;
  };
  const requireOperator = (c: Context): void => {
    if (requireWrite(c).kind !== 'operator') throw new ApiError(403, 'only an operator may pause or resume sellers.');
  };
  const ns = namespaceOf(config.queuePrefix);
  const sellerParam = (c: Context): string => {
    const sellerId = c.req.param('id') ?? '';
    if (!SELLER_ID.test(sellerId)) throw new ApiError(400, `seller ${JSON.stringify(sellerId.slice(0, 80))} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -.`);
    return sellerId;
  };
  /** The pause's reason: none is required (no body, or no `reason`), but a body that is not as console.md says is refused. */
  const reasonOf = async (c: Context): Promise<string> => {
    const text = await c.req.text();
    if (text.trim() === '') return 'no reason given';
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError(400, 'the body must be JSON such as {"reason": "stock audit"} (or empty: a reason is not required).');
    }
    const given = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { reason?: unknown }).reason : body;
    if (given !== undefined && typeof given !== 'string') throw new ApiError(400, 'the reason must be text, such as {"reason": "stock audit"}.');
    return pauseReason(given).reason;
  };

  app.post('/api/uploads/:id/cancel', async (c) => {
    const scope = requireWrite(c);
    const uploadId = c.req.param('id');
    const unknown = () => new ApiError(404, unknownUpload(uploadId));
    if (!/^[0-9a-f]{24}$/.test(uploadId)) throw unknown();
    const sellerId = await sellerOfUpload(deps.redis, ns, uploadId);
    if (!sellerId) throw unknown();
    if (scope.kind === 'seller' && scope.sellerId !== sellerId) throw new ApiError(403, OTHERS_UPLOAD);
    await cancelUpload({ redis: deps.redis, config, queues: deps.queues, limiter: limiterFor(deps.redis, config), now: deps.now }, uploadId);
    log.info({ sellerId, uploadId, by: scope.kind }, 'upload cancelled from the console');
    const upload = statusJson(await readStatus(deps.redis, config, { uploadId })).uploads[0];
    return c.json(upload ?? { uploadId }, 200);
  });

  app.post('/api/sellers/:id/pause', async (c) => {
    requireOperator(c);
    const sellerId = sellerParam(c);
    await pauseSeller(deps.redis, ns, sellerId, { reason: await reasonOf(c), by: 'operator', since: deps.now() });
    log.info({ sellerId }, 'seller paused from the console');
    return c.json(await sellerStatusJson(deps.redis, config, sellerId), 200);
  });

  app.post('/api/sellers/:id/resume', async (c) => {
    requireOperator(c);
    const sellerId = sellerParam(c);
    await resumeSeller(deps.redis, ns, sellerId, deps.queues, log);
    log.info({ sellerId }, 'seller resumed from the console');
    return c.json(await sellerStatusJson(deps.redis, config, sellerId), 200);
  });

  app.post('/api/pause-all', async (c) => {
    requireOperator(c);
    await pauseSeller(deps.redis, ns, ALL, { reason: await reasonOf(c), by: 'operator', since: deps.now() });
    log.info('every seller paused from the console');
    return c.json({ ok: true }, 200);
  });

  app.post('/api/resume-all', async (c) => {
    requireOperator(c);
    await resumeSeller(deps.redis, ns, ALL, deps.queues, log);
    log.info('every seller resumed from the console');
    return c.json({ ok: true }, 200);
  });

  app.get('/api/uploads/:id/report', async (c) => {
    const { scope } = requireAccess(c);
    const uploadId = c.req.param('id');
    // one sentence for an upload that never existed, one that expired and another seller's
    const unknown = () => new ApiError(404, `no upload ${JSON.stringify(uploadId.slice(0, 80))} is known (it may have expired): check the id.`);
    if (!/^[0-9a-f]{24}$/.test(uploadId)) throw unknown();
    let found;
    try {
      found = await readReportRows(deps.redis, config, uploadId);
    } catch (err) {
      if (err instanceof UnknownUpload) throw unknown();
      throw err;
    }
    if (scope.kind === 'seller' && found.sellerId !== scope.sellerId) throw unknown();
    const failedOnly = c.req.query('failedOnly') === '1' || c.req.query('failedOnly') === 'true';
    const bytes = await buildReport(found.rows, { failedOnly, columns: found.columns });
    const name = `${failedOnly ? 'to-fix' : 'result'}-${found.sellerId}-${uploadId.slice(0, 8)}.xlsx`;
    return c.body(new Uint8Array(bytes), 200, { 'Content-Type': XLSX, 'Content-Disposition': `attachment; filename="${name}"`, 'Cache-Control': 'no-store' });
  });

  app.get('/api/template', async (c) => {
    const lang = c.req.query('lang') ?? 'ko';
    if (lang !== 'ko' && lang !== 'en') throw new ApiError(400, `lang ${JSON.stringify(lang.slice(0, 20))} is invalid: expected ko or en.`);
    // read on every request: an edit of the file needs no restart
    let extra: TemplateColumn[] = [];
    if (config.templateColumnsFile !== undefined) {
      try {
        extra = await loadTemplateColumns(config.templateColumnsFile, 'TEMPLATE_COLUMNS_FILE');
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        log.warn({ reason: err.message }, 'template refused: TEMPLATE_COLUMNS_FILE is invalid');
        // the file's path and contents are the operator's business, not a seller's
        throw new ApiError(500, 'the template cannot be made: the marketplace columns file set by the operator is invalid (the reason was logged); ask the operator.');
      }
    }
    const bytes = await buildTemplate(lang, extra);
    return c.body(new Uint8Array(bytes), 200, { 'Content-Type': XLSX, 'Content-Disposition': `attachment; filename="bulk-register-template-${lang}.xlsx"` });
  });

  app.get('/api/events', (c) => {
    const access = requireAccess(c);
    const scope = scopeWith(access.scope, c.req.query('seller'));
    return streamSSE(c, async (stream) => {
      let id = 0;
      let writing = Promise.resolve();
      const write = (event: 'status' | 'unavailable', data: string) => {
        writing = writing.then(() => stream.writeSSE({ event, data, id: String(++id) })).catch(() => undefined);
      };
      const statusSender = () => viewSender<ConsoleSnapshot>((snapshot) => JSON.stringify(viewOf(snapshot, scope)), (data) => write('status', data), HEARTBEAT_MS, deps.now);
      let send = statusSender();
      const unsubscribe = deps.feed.subscribe(
        (snapshot) => send(snapshot),
        // while Redis does not answer there is no status to send: say so on every tick instead
        // (the page then shows it is not live); a fresh sender sends the next view at once
        () => {
          send = statusSender();
          write('unavailable', JSON.stringify({ error: REDIS_DOWN }));
        },
      );
      await new Promise<void>((resolve) => {
        stream.onAbort(() => resolve());
        // a seller link's stream ends when the link expires
        // (timers hold at most 2^31 - 1 ms: a longer link gets a fresh stream when the browser reconnects)
        if (access.expiresAt !== undefined) setTimeout(resolve, Math.min(2 ** 31 - 1, Math.max(0, access.expiresAt - deps.now()))).unref();
      });
      unsubscribe();
    });
  });

  return app;
}
