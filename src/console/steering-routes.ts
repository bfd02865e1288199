/**
 * The console's writes that steer what runs (console.md): a seller or an
 * operator cancels an upload; an operator pauses and resumes a seller or
 * every seller. Each does what `cancel`, `pause` and `resume` do.
 */
import type { Context, Hono } from 'hono';
import { namespaceOf, SELLER_ID, UPLOAD_ID } from '../keys.js';
import { limiterFor, readStatus, sellerStatusJson, statusJson } from '../progress/status.js';
import { cancelUpload, sellerOfUpload } from '../steering/cancel.js';
import { ALL, pauseReason, pauseSeller, resumeSeller } from '../steering/pauses.js';
import { ApiError, invalidSeller, OTHERS_UPLOAD, unknownUpload } from './api-error.js';
import type { RouteDeps } from './server.js';

const sellerParam = (c: Context): string => {
  const sellerId = c.req.param('id') ?? '';
  if (!SELLER_ID.test(sellerId)) throw new ApiError(400, invalidSeller(sellerId));
  return sellerId;
};

/** The pause's reason: none is required (no body, or no `reason`), but a body that is not as console.md says is refused. */
async function reasonOf(c: Context): Promise<string> {
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
}

export function addSteeringRoutes(app: Hono, deps: RouteDeps): void {
  const { redis, queues, config, log, now, access } = deps;
  const ns = namespaceOf(config.queuePrefix);

  app.post('/api/uploads/:id/cancel', async (c) => {
    const scope = access.requireWrite(c, 'changes are');
    const uploadId = c.req.param('id');
    const unknown = () => new ApiError(404, unknownUpload(uploadId));
    if (!UPLOAD_ID.test(uploadId)) throw unknown();
    const sellerId = await sellerOfUpload(redis, ns, uploadId);
    if (!sellerId) throw unknown();
    if (scope.kind === 'seller' && scope.sellerId !== sellerId) throw new ApiError(403, OTHERS_UPLOAD);
    await cancelUpload({ redis, config, queues, limiter: limiterFor(redis, config), now }, uploadId);
    log.info({ sellerId, uploadId, by: scope.kind }, 'upload cancelled from the console');
    const upload = statusJson(await readStatus(redis, config, { uploadId })).uploads[0];
    return c.json(upload ?? { uploadId }, 200);
  });

  app.post('/api/sellers/:id/pause', async (c) => {
    access.requireOperator(c);
    const sellerId = sellerParam(c);
    await pauseSeller(redis, ns, sellerId, { reason: await reasonOf(c), by: 'operator', since: now() });
    log.info({ sellerId }, 'seller paused from the console');
    return c.json(await sellerStatusJson(redis, config, sellerId), 200);
  });

  app.post('/api/sellers/:id/resume', async (c) => {
    access.requireOperator(c);
    const sellerId = sellerParam(c);
    await resumeSeller(redis, ns, sellerId, queues, log);
    log.info({ sellerId }, 'seller resumed from the console');
    return c.json(await sellerStatusJson(redis, config, sellerId), 200);
  });

  app.post('/api/pause-all', async (c) => {
    access.requireOperator(c);
    await pauseSeller(redis, ns, ALL, { reason: await reasonOf(c), by: 'operator', since: now() });
    log.info('every seller paused from the console');
    return c.json({ ok: true }, 200);
  });

  app.post('/api/resume-all', async (c) => {
    access.requireOperator(c);
    await resumeSeller(redis, ns, ALL, queues, log);
    log.info('every seller resumed from the console');
    return c.json({ ok: true }, 200);
  });
}
