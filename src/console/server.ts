/**
 * The console (console.md): the seller page, the operator page and the JSON
 * API, on hono. Who may see and change what is decided in request-access.ts;
 * sheets are taken in upload-route.ts, cancels and pauses in
 * steering-routes.ts; the live stream comes from one shared LiveFeed. Every
 * error answers `{"error": one sentence}` (api-error.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono, type Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import { streamSSE } from 'hono/streaming';
import { ConfigError, type Config } from '../config.js';
import { UPLOAD_ID } from '../keys.js';
import type { Logger } from '../logger.js';
import { PACKAGE_ROOT } from '../paths.js';
import type { QueueSet } from '../queue.js';
import type { RedisClient } from '../redis.js';
import { buildReport, readReportRows, UnknownUpload } from '../report/upload-report.js';
import { buildTemplate } from '../report/template.js';
import { loadTemplateColumns, type TemplateColumn } from '../report/template-columns.js';
import { ApiError, INTERNAL_ERROR, REDIS_DOWN } from './api-error.js';
import { operatorSession, sameSecret } from './access.js';
import type { IntakeBounds } from './intake.js';
import { LiveFeed, viewSender } from './live.js';
import { messagePage, operatorPage, sellerPage } from './pages/pages.js';
import { pickLang, STRINGS, type Lang } from './pages/i18n.js';
import { LATE, redisGate, type RedisGate } from './redis-gate.js';
import { OPS_COOKIE, requestAccess, type RequestAccess } from './request-access.js';
import type { ConsoleSnapshot, SnapshotReader } from './snapshot.js';
import { addSteeringRoutes } from './steering-routes.js';
import { addUploadRoute } from './upload-route.js';
import { viewOf } from './views.js';

const LANG_COOKIE = 'br_lang';
/** The SSE stream sends a client's view on change, and at least this often. */
export const HEARTBEAT_MS = 1500;

export interface ConsoleDeps {
  redis: RedisClient;
  queues: QueueSet;
  config: Config;
  log: Logger;
  reader: SnapshotReader;
  feed: LiveFeed<ConsoleSnapshot>;
  now: () => number;
  /** REDIS_WAIT_MS (redis-gate.ts) unless given (tests). */
  redisWaitMs?: number;
  /** The intake line's bounds (upload-route.ts) unless given (tests). */
  intake?: IntakeBounds;
}

/** What the route modules (upload-route.ts, steering-routes.ts) are given. */
export interface RouteDeps extends ConsoleDeps {
  access: RequestAccess;
  gate: RedisGate;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

const ASSET_TYPES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'row-reasons.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export function createConsoleApp(deps: ConsoleDeps): Hono {
  const { config, log } = deps;
  const opts = config.console;
  const gate = redisGate(deps.redis, deps.redisWaitMs);
  const access = requestAccess(opts, deps.now);

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
    if (!(await gate.ready())) return refuse();
    if ((await gate.orLate(next())) === LATE) return refuse();
  });

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
    const a = access.accessOf(c);
    if (!a.ok || a.scope.kind !== 'operator') return c.html(messagePage(lang, STRINGS[lang].signIn), a.ok ? 403 : a.status);
    return c.html(operatorPage(lang, viewOf(await deps.reader.read(), a.scope)), 200, NO_STORE);
  });

  app.get('/s/:token', async (c) => {
    const lang = langOf(c);
    const token = c.req.param('token');
    const a = access.sellerAccess(token);
    if (!a.ok || a.scope.kind !== 'seller') return c.html(messagePage(lang, STRINGS[lang].forbidden), 403);
    const sellerId = a.scope.sellerId;
    // the page holds the link's token and the seller's data: no cache keeps it
    return c.html(sellerPage(lang, token, sellerId, viewOf(await deps.reader.read({ sellerId }), a.scope)), 200, NO_STORE);
  });

  app.get('/api/uploads', async (c) => {
    const scope = access.scopeWith(access.requireAccess(c).scope, c.req.query('seller'));
    return c.json(viewOf(await deps.reader.read(scope.sellerId ? { sellerId: scope.sellerId } : {}), scope));
  });

  addUploadRoute(app, { ...deps, access, gate });
  addSteeringRoutes(app, { ...deps, access, gate });

  app.get('/api/uploads/:id/report', async (c) => {
    const { scope } = access.requireAccess(c);
    const uploadId = c.req.param('id');
    // one sentence for an upload that never existed, one that expired and another seller's
    const unknown = () => new ApiError(404, `no upload ${JSON.stringify(uploadId.slice(0, 80))} is known (it may have expired): check the id.`);
    if (!UPLOAD_ID.test(uploadId)) throw unknown();
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
    const granted = access.requireAccess(c);
    const scope = access.scopeWith(granted.scope, c.req.query('seller'));
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
        if (granted.expiresAt !== undefined) setTimeout(resolve, Math.min(2 ** 31 - 1, Math.max(0, granted.expiresAt - deps.now()))).unref();
      });
      unsubscribe();
    });
  });

  return app;
}
