/** `bulk-register workers [--processes N] [--concurrency C]`: runs the pool until SIGINT/SIGTERM. */
import type { Config } from '../config.js';
import { workerConfigEnv } from '../worker/worker-config.js';
import { namespaceOf } from '../keys.js';
import { QueueSet, resolveShardPrefixes } from '../queue.js';
import { queuesKey } from '../queue-shards.js';
import { announcePool } from '../worker/pool-presence.js';
import { createReconciler, STALL_MS } from '../upload/reconcile.js';
import { limiterFor } from '../progress/status.js';
import type { Logger } from '../logger.js';
import { bullConnection } from '../redis.js';
import { PoolMetrics, serveMetrics } from '../worker/metrics.js';
import { WorkerPool } from '../worker/supervisor.js';
import { connectService } from './service-redis.js';
import { migrateLimits } from '../rate-limit/seller-limits.js';
import { finishedCancels } from '../steering/cancel.js';
import { readApiState } from '../steering/outage.js';
import { checkWebhookConfig, collectEvents, startWebhookDelivery, webhookQueue, type WebhookEvent } from '../steering/webhooks.js';
import { loadAdapter } from '../registration/load-adapter.js';
import { CredentialStore } from '../registration/credentials.js';
import { Redactor } from '../registration/redactor.js';

export async function workersCommand(config: Config, log: Logger, opts: { strict?: boolean } = {}): Promise<number> {
  // a credentials file that cannot be used, or an adapter that cannot load, stops the start (one
  // sentence, exit 1); the credentials first, so that the adapter's error is told without them
  const redactor = new Redactor();
  if (config.registrationToken) redactor.setSource('REGISTRATION_TOKEN', [config.registrationToken]);
  // kept open to watch the file: a reload or a bad edit is logged here once for the pool, not by each process
  const credentials = CredentialStore.open(config.sellerCredentialsFile, redactor, { log, watch: true });
  const adapter = await loadAdapter(config, process.cwd(), redactor);
  const signer = checkWebhookConfig(config);
  log.info({ adapter: adapter.name, tokens: adapter.tokens, credentials: config.sellerCredentialsFile ? 'file' : 'none' }, 'registration adapter loaded');
  // The supervisor's own connection: metrics (queue depth) and /healthz. It waits for Redis like the workers.
  // under --strict an evicting Redis refuses the start before any worker starts
  const redis = await connectService(config, log, { strict: opts.strict, persistence: true });
  // sellers' rules kept as an earlier version did: moved before any worker reads them
  const moved = await migrateLimits(redis, config);
  if (moved > 0) log.info({ sellers: moved }, 'moved per-seller rules to the form the limiter reads');
  const connection = bullConnection(config, 'worker');
  connection.on('error', () => undefined);
  const queues = QueueSet.on(connection, () => resolveShardPrefixes(config, redis as never));
  const metrics = new PoolMetrics(async () => {
    for (const prefix of await redis.zrange(queuesKey(namespaceOf(config.queuePrefix)), '0', '-1')) queues.get(prefix);
    for (const prefix of queues.prefixes) queues.get(prefix);
    return queues.opened();
  });

  const pool = new WorkerPool({
    processes: config.workerProcesses,
    env: {
      ...process.env,
      // the workers' settings travel whole, checked (worker-config.ts); pretty logs when ours go to a terminal
      ...workerConfigEnv({ ...config, logPretty: config.logPretty ?? process.stdout.isTTY }),
    },
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    log,
    onMessage: (_slot, m) => metrics.onMessage(m),
    onSlotChange: (slot, up) => metrics.slot(slot, up),
    // pauses, cancels and the outage: read here once for every process (steering/steer-relay.ts)
    steering: { redis, ns: namespaceOf(config.queuePrefix) },
  });
  pool.start();
  // uploads whose counters fell behind their finished jobs (a lossy failover on a cluster) are healed
  const reconcile = createReconciler(redis, limiterFor(redis, config), config, log);
  let reconciling = false;
  const reconcileTimer = setInterval(() => {
    if (reconciling || redis.status !== 'ready') return;
    reconciling = true;
    reconcile().catch((err: Error) => log.warn({ err }, 'could not check uploads against their jobs')).finally(() => { reconciling = false; });
  }, STALL_MS);
  reconcileTimer.unref();
  // a cancelled upload's `upload finished` line and its cancelled rows in /metrics, once it is finished
  // notifications: finished uploads and changed pauses go to the outbox, delivered from here
  const outbox = signer ? webhookQueue(config, connection) : undefined;
  const delivery = signer ? startWebhookDelivery(config, connection, signer, log) : undefined;
  let collecting = false;
  const collectTimer = setInterval(() => {
    if (collecting || redis.status !== 'ready') return;
    collecting = true;
    collectEvents(redis, config, outbox)
      .then((events) => { for (const e of events) log.info({ ...subjectOf(e), webhookId: `msg_${e.id}`, type: e.type, queued: outbox !== undefined }, 'notification due'); })
      .catch((err: Error) => log.warn({ err }, 'could not look for notifications due'))
      .finally(() => { collecting = false; });
  }, 1000);
  collectTimer.unref();
  metrics.api(true);
  const cancelTimer = setInterval(() => {
    if (redis.status !== 'ready') return;
    // the outage's start and end are logged once for the whole pool, by the worker whose write opened or closed it
    readApiState(redis, namespaceOf(config.queuePrefix)).then((api) => metrics.api(api.available), () => undefined);
    finishedCancels(redis, namespaceOf(config.queuePrefix), Date.now() - 24 * 3_600_000).then((finished) => {
      for (const f of finished) {
        log.info(f, 'upload finished');
        if (Number(f.cancelled) > 0) metrics.onMessage({ type: 'events', counts: [['cancelled', String(f.sellerId), Number(f.cancelled)]], waitsMs: [] });
      }
    }, (err: Error) => log.debug({ err }, 'could not look for finished cancelled uploads'));
  }, 1000);
  cancelTimer.unref();
  // for the console: processes up against expected
  // (a process counts once it is ready to take rows: the start goes a few processes at a time)
  const stopAnnouncing = announcePool(redis, namespaceOf(config.queuePrefix), () => ({ up: pool.ready, expected: config.workerProcesses }));
  const server = await serveMetrics(
    metrics,
    config.metricsPort,
    async () => ({
      redis: await Promise.race([redis.ping().then(() => true, () => false), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]),
      workers: pool.ready,
      expected: config.workerProcesses,
    }),
    log,
  );
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      log.info({ signal }, 'stopping the worker pool: no new jobs, finishing the ones in hand');
      resolve();
    };
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
  });
  clearInterval(reconcileTimer);
  clearInterval(cancelTimer);
  clearInterval(collectTimer);
  credentials.close();
  await delivery?.close().catch(() => undefined);
  await outbox?.close().catch(() => undefined);
  await pool.stop();
  await stopAnnouncing();
  await server?.close();
  await queues.close();
  connection.disconnect();
  redis.disconnect();
  log.info('worker pool stopped');
  return 0;
}

/** Whom an event is about, for its log line: the seller (with the pause's reason) or the upload. */
function subjectOf(e: WebhookEvent): Record<string, unknown> {
  const { seller, upload } = e.data as { seller?: { sellerId: string; paused: { reason: string; by: string } | null }; upload?: { sellerId: string; uploadId: string } };
  if (upload) return { sellerId: upload.sellerId, uploadId: upload.uploadId };
  return seller ? { sellerId: seller.sellerId, ...(seller.paused ? { reason: seller.paused.reason, by: seller.paused.by } : {}) } : {};
}
