/**
 * Signed notifications (cli.md "Notifications"), following the Standard Webhooks
 * specification: `webhook-id`, `webhook-timestamp`, `webhook-signature`, signed
 * with the `standardwebhooks` library that receivers verify with.
 *
 * Events come from what Redis holds, not from the moment something happened, so
 * that none is lost to a crash in between:
 * - `{ns}:unnotified` (zset uploadId -> created ms): every upload, added by the
 *   producer. The pool's supervisor looks at it every second; an upload that is
 *   finished (or cancelled and finished) becomes `upload.finished` (or
 *   `upload.cancelled`) and leaves the set only once its event is in the outbox.
 * - `{ns}:pause-events` (list): every pause set or lifted, appended where it happens
 *   (steering/pauses.ts), becomes `seller.paused` or `seller.resumed`, in order,
 *   and leaves the list only once it is in the outbox. Its `data.seller` is the
 *   seller as `status --json` shows it, with the pause of the event (`"*"`: every
 *   seller, for `pause --all` and its `resume --all`).
 *
 * The outbox is a BullMQ queue (`webhooks`): an event's job id is its
 * webhook-id, derived from what it is about (`upload.finished-<uploadId>`), so
 * it is added once however many pools see it, kept across restarts, and retried
 * with backoff for more than 24 h while the receiver answers anything but 2xx.
 */
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import axios from 'axios';
import { Webhook } from 'standardwebhooks';
import { ConfigError, type Config } from '../config.js';
import { namespaceOf, unnotifiedKey, uploadIndexKey } from '../keys.js';
import type { Logger } from '../logger.js';
import { releaseLock, type RedisClient } from '../redis.js';
import { readStatus, sellerStatusJson, statusJson } from '../progress/status.js';
import { pauseEventsKey, type PauseEvent } from './pauses.js';
import { uploadKeysOf } from '../seller-home.js';

export const WEBHOOK_QUEUE = 'webhooks';
/**
 * Attempts: with the backoff below, the last is more than 24 h after the first
 * (from a first retry of 100 ms, the least UPLOAD_WEBHOOK_RETRY_MS allows: 16
 * doubling waits of 1.8 h in all, then 23 of 1 h).
 */
export const WEBHOOK_ATTEMPTS = 40;

/** Held by the pool's supervisor that takes the pause events (several pools may run): one at a time, in order. */
const pauseEventsLockKey = (ns: string) => `${ns}:pause-events:lock`;
/** Pause events taken at one look. */
const PAUSE_EVENTS_AT_ONCE = 100;

export type WebhookEventType = 'upload.finished' | 'upload.cancelled' | 'seller.paused' | 'seller.resumed';

export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  timestamp: string;
  data: Record<string, unknown>;
}

/** Delay before attempt n + 1 (ms): `firstMs` (UPLOAD_WEBHOOK_RETRY_MS, 5 s), then doubling up to 1 h. */
export function webhookBackoff(attemptsMade: number, firstMs: number): number {
  return Math.min(3_600_000, firstMs * 2 ** Math.max(0, attemptsMade - 1));
}

/**
 * UPLOAD_WEBHOOK_SECRET checked as the specification writes it (`whsec_` and a
 * base64 key of at least 16 bytes). @throws ConfigError (never showing the value).
 */
export function checkWebhookConfig(config: Config): Webhook | undefined {
  if (!config.webhookUrl) return undefined;
  const secret = config.webhookSecret ?? '';
  if (!secret) throw new ConfigError('UPLOAD_WEBHOOK_SECRET is missing: with UPLOAD_WEBHOOK_URL set, give the signing secret as whsec_<base64 key>.');
  const key = secret.startsWith('whsec_') ? secret.slice(6) : undefined;
  const bytes = key !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(key) ? Buffer.from(key, 'base64') : undefined;
  if (!bytes || bytes.length < 16) {
    throw new ConfigError('UPLOAD_WEBHOOK_SECRET=(hidden) is invalid: expected whsec_ followed by a base64 key of at least 16 bytes, as the Standard Webhooks specification writes it.');
  }
  return new Webhook(secret);
}

/** The outbox on the queue prefix's own slot. */
export function webhookQueue(config: Config, connection: ConnectionOptions): Queue<WebhookEvent> {
  return new Queue<WebhookEvent>(WEBHOOK_QUEUE, { connection, prefix: config.queuePrefix });
}

const jobIdOf = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, '-');

async function enqueue(queue: Queue<WebhookEvent>, event: WebhookEvent): Promise<void> {
  await queue.add(event.type, event, {
    jobId: jobIdOf(event.id),
    attempts: WEBHOOK_ATTEMPTS,
    backoff: { type: 'webhook' },
    removeOnComplete: { age: 7 * 86_400 },
    removeOnFail: { age: 7 * 86_400 },
  });
}

/**
 * One look at what is due: finished uploads and changed pauses become events in
 * the outbox (or, without a URL, are only marked seen). Returns the events added.
 */
export async function collectEvents(redis: RedisClient, config: Config, queue: Queue<WebhookEvent> | undefined, now = Date.now()): Promise<WebhookEvent[]> {
  const ns = namespaceOf(config.queuePrefix);
  const added: WebhookEvent[] = [];
  const ids = await redis.zrange(unnotifiedKey(ns), '0', '-1');
  if (ids.length > 0) {
    const index = new Map((await redis.zrange(uploadIndexKey(ns), '0', '-1')).map((m) => {
      const slash = m.indexOf('/');
      return [m.slice(slash + 1), m.slice(0, slash)] as const;
    }));
    for (const uploadId of ids) {
      const sellerId = index.get(uploadId);
      const counts = sellerId ? await redis.hmget((await uploadKeysOf(redis, ns, sellerId, uploadId)).upload, 'total', 'registered', 'duplicate', 'failed', 'cancelled', 'reopened') : [null];
      if (!sellerId || counts[0] === null) {
        await redis.zrem(unnotifiedKey(ns), uploadId); // expired: nothing to tell
        continue;
      }
      const reopened = Number(counts[5] ?? 0);
      const [total, ...finished] = counts.slice(0, 5).map((v) => Number(v ?? 0)) as [number, ...number[]];
      // not finished: looked at again next time (one HMGET per unfinished upload a second)
      if (finished.reduce((a, b) => a + b, 0) < total) continue;
      const upload = statusJson(await readStatus(redis, config, { uploadId })).uploads[0];
      if (!upload?.done) continue;
      const type: WebhookEventType = upload.state === 'cancelled' ? 'upload.cancelled' : 'upload.finished';
      // an upload cancelled again after its cancelled rows were uploaded again: an event of its own
      // (one with the first id would be taken for a retry of the first and dropped)
      const event: WebhookEvent = { id: `${type}-${uploadId}${type === 'upload.cancelled' && reopened > 0 ? `-${reopened + 1}` : ''}`, type, timestamp: new Date(now).toISOString(), data: { upload } };
      if (queue) await enqueue(queue, event);
      await redis.zrem(unnotifiedKey(ns), uploadId);
      added.push(event);
    }
  }
  // the pauses set and lifted, in order; taken off the list once in the outbox (their ids make a second add a no-op)
  const lock = `${process.pid}-${now}`;
  if ((await redis.set(pauseEventsLockKey(ns), lock, 'PX', 10_000, 'NX')) === 'OK') {
    try {
      const raw = await redis.lrange(pauseEventsKey(ns), 0, PAUSE_EVENTS_AT_ONCE - 1);
      for (const json of raw) {
        let e: PauseEvent | undefined;
        try {
          e = JSON.parse(json) as PauseEvent;
        } catch {
          e = undefined;
        }
        if (e?.type !== 'seller.paused' && e?.type !== 'seller.resumed') continue;
        const seller = e.sellerId === '*' ? undefined : await sellerStatusJson(redis, config, e.sellerId);
        const event = sellerEvent(e, seller, now);
        if (queue) await enqueue(queue, event);
        added.push(event);
      }
      if (raw.length > 0) await redis.ltrim(pauseEventsKey(ns), raw.length, -1);
    } finally {
      await releaseLock(redis, pauseEventsLockKey(ns), lock);
    }
  }
  return added;
}

/**
 * A pause event for the outbox. `seller`: the seller as `status --json` shows it now (every
 * seller: `*`, for pause --all and resume --all); its `paused` is the event's (the pause may
 * have been lifted since). Its timestamp is when the pause was set or lifted, not when the
 * pool found the event (up to a second later, or after a restart).
 */
function sellerEvent(e: PauseEvent, seller: object | undefined, now: number): WebhookEvent {
  const { type, sellerId, pause } = e;
  // a pause is known by its start: the same pause gives the same id, a new one a new id
  const paused = type === 'seller.paused' ? { reason: pause.reason, by: pause.by, since: pause.since } : null;
  return {
    id: `${type}-${sellerId === '*' ? 'all' : sellerId}-${pause.since}`,
    type,
    timestamp: new Date(e.at ?? now).toISOString(),
    data: { seller: { ...(seller ?? { sellerId }), paused } },
  };
}

/** The body a receiver gets: the event without its id (the id is the webhook-id header). */
export const webhookBody = (e: WebhookEvent) => JSON.stringify({ type: e.type, timestamp: e.timestamp, data: e.data });

/** Delivers the outbox: one POST per attempt, signed with that attempt's timestamp. */
export function startWebhookDelivery(config: Config, connection: ConnectionOptions, signer: Webhook, log: Logger): Worker<WebhookEvent> {
  const url = config.webhookUrl!;
  // where to, for the logs: never the query or credentials, which may carry a key
  const shown = (() => { const u = new URL(url); return `${u.origin}${u.pathname}`; })();
  const worker = new Worker<WebhookEvent>(WEBHOOK_QUEUE, async (job: Job<WebhookEvent>) => {
    const body = webhookBody(job.data);
    const msgId = `msg_${job.id}`;
    const at = new Date();
    const res = await axios.post(url, body, {
      headers: {
        'content-type': 'application/json',
        'webhook-id': msgId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signer.sign(msgId, at, body),
      },
      timeout: 10_000,
      maxRedirects: 0,
      validateStatus: () => true,
      transformResponse: [(d: unknown) => d],
    }).catch((err: { code?: string }) => ({ status: 0, code: err?.code }));
    if (res.status >= 200 && res.status < 300) {
      log.info({ webhookId: msgId, type: job.data.type, attempt: job.attemptsMade + 1 }, 'webhook delivered');
      return;
    }
    const why = res.status ? `the receiver answered ${res.status}` : `no answer (${(res as { code?: string }).code ?? 'error'})`;
    log.warn({ webhookId: msgId, type: job.data.type, attempt: job.attemptsMade + 1, receiver: shown, why }, 'webhook not delivered; it is sent again later');
    throw new Error(why);
  }, {
    connection,
    prefix: config.queuePrefix,
    concurrency: 4,
    // a pool killed mid-delivery: the event is sent again once its lock lapses, as rows are
    lockDuration: config.lockDurationMs,
    stalledInterval: Math.max(1000, Math.floor(config.lockDurationMs / 2)),
    settings: { backoffStrategy: (attemptsMade: number) => webhookBackoff(attemptsMade, config.webhookRetryMs) },
  });
  worker.on('error', () => undefined);
  return worker;
}
