/**
 * One worker process of the pool: a BullMQ Worker per queue shard, all running
 * the registration processor and sharing the process's slots. Started by the
 * supervisor (child_process.fork); exits cleanly when told to stop, on
 * SIGINT/SIGTERM, or when the supervisor goes away.
 */
import { Worker, type Job } from 'bullmq';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { QUEUE_NAME, namespaceOf, rowMember } from '../keys.js';
import { createRedis, describeRedis, missingDatabase, type RedisClient } from '../redis.js';
import { SellerLimiter, type LimiterSettings, type PermitLimiter, type QueueKeys } from '../rate-limit/limiter.js';
import { createRegistrationClient } from '../registration/client.js';
import { loadAdapter } from '../registration/load-adapter.js';
import { CredentialStore } from '../registration/credentials.js';
import { Redactor } from '../registration/redactor.js';
import { SellerTokens } from '../registration/tokens.js';
import { PauseWatch } from '../steering/pause-watch.js';
import { PAUSE_POLL_MS, releaseHeld, resumeSeller } from '../steering/pauses.js';
import { QueueSet } from '../queue.js';
import { backoffWithJitter, createProcessor, type ProcessResult, type ProcessorEvent } from './processor.js';
import type { RegistrationJob } from '../queue.js';
import type { ChildMessage, SupervisorMessage } from './messages.js';
import { RELAYED_READ_MS, STEERING_RELAYED_ENV } from '../steering/steer-relay.js';
import { createWakeKicker } from './wake-kick.js';
import { guardClusterFailover, guardLostWrites } from './lost-writes-guard.js';
import { resolveShardPrefixes } from '../queue.js';
import { queuesKey } from '../queue-shards.js';
import { AdaptiveConcurrency } from './adaptive-concurrency.js';
import { Cluster } from 'ioredis';

/** How often a worker process looks for queue shards it does not serve yet (ms). */
const QUEUES_REFRESH_MS = 5000;

/** How long a stop waits for BullMQ's close once the jobs in hand are settled (ms). */
export const CLOSE_GRACE_MS = 2000;

function send(message: ChildMessage): void {
  if (process.connected) process.send?.(message);
}

/**
 * A BullMQ Worker that says when it fetches a job in a write of its own (its
 * moveToActive): the processor asks for that row's permit in the same write.
 */
class FetchingWorker extends Worker<RegistrationJob, ProcessResult> {
  onFetch: ((token: string) => void) | undefined;

  protected override moveToActive(token: string, name?: string): Promise<Job<RegistrationJob, ProcessResult>> {
    this.onFetch?.(token);
    return super.moveToActive(token, name);
  }
}

/** BullMQ's keys for the queue whose qualified name ("{prefix}:registrations") is given. */
const queueKeysOf = (qualifiedName: string): QueueKeys => ({ active: `${qualifiedName}:active`, jobPrefix: `${qualifiedName}:` });

export interface WorkerProcessOptions {
  /** The limiter to use (default: the sliding-window SellerLimiter). The bench plugs in alternatives. */
  makeLimiter?: (redis: RedisClient, settings: LimiterSettings) => PermitLimiter;
  /** BullMQ's own queue-wide limiter (the bench's `bullmq-limiter` peer); the product never sets it. */
  queueLimiter?: { max: number; duration: number };
  /** Read and obey pauses (default true; the bench's bare and peer pools run without, as they would). */
  pauses?: boolean;
}

export async function runWorkerProcess(config: Config, log: Logger, opts: WorkerProcessOptions = {}): Promise<void> {
  const redis: RedisClient = createRedis(config, 'worker');
  let waitingLogged = 0;
  const onRedisError = (err: Error) => {
    if (Date.now() - waitingLogged > 5000) {
      waitingLogged = Date.now();
      log.warn({ err }, `waiting for ${describeRedis(config)}`);
    }
  };
  redis.on('error', onRedisError);
  redis.connect().catch(onRedisError);
  // BullMQ's worker also reports a job it could not finish because the job's lock had
  // lapsed (the process stalled past LOCK_DURATION_MS, or Redis failed over meanwhile):
  // not Redis being away, and nothing lost (the stalled check runs the job again, under
  // the same idempotency key)
  let lockLossLogged = 0;
  const onWorkerError = (err: Error) => {
    if (!/^(Missing lock|Lock mismatch) for job /.test(err.message)) return onRedisError(err);
    if (Date.now() - lockLossLogged > 5000) {
      lockLossLogged = Date.now();
      log.warn({ err }, 'a job lost its lock before it finished (this process stalled, or Redis failed over): it runs again, under the same idempotency key');
    }
  };

  const settings: LimiterSettings = {
    queuePrefix: config.queuePrefix,
    limit: config.rateLimitMax,
    windowMs: config.rateLimitWindowMs,
    guardMs: config.rateLimitGuardMs,
    holdMs: config.apiTimeoutMs,
  };
  const limiter = opts.makeLimiter ? opts.makeLimiter(redis, settings) : new SellerLimiter(redis, settings);
  if (limiter instanceof SellerLimiter) {
    if (redis instanceof Cluster) guardClusterFailover(redis, limiter, config, log);
    else guardLostWrites(redis, limiter, config, log);
  }
  // Events go to the supervisor in batches (metrics, bench), not one IPC message each.
  const counts = new Map<string, number>();
  const waits: number[] = [];
  /** One BullMQ Worker per queue shard; the process's slots are shared among them. */
  const workers = new Map<string, Worker<RegistrationJob, ProcessResult>>();
  let slots = config.workerConcurrency === 'auto' ? 1 : config.workerConcurrency;
  const slotsEach = () => Math.max(1, Math.ceil(slots / Math.max(1, workers.size)));
  const rebalance = () => {
    for (const w of workers.values()) if (w.concurrency !== slotsEach()) w.concurrency = slotsEach();
  };
  const flush = () => {
    if (counts.size === 0 && waits.length === 0) return;
    const batch = [...counts].map(([k, n]) => {
      const [event, sellerId] = k.split('\t') as [ProcessorEvent, string];
      return [event, sellerId, n] as [ProcessorEvent, string, number];
    });
    const concurrency = [...workers.values()].reduce((n, w) => n + w.concurrency, 0);
    send({ type: 'events', counts: batch, waitsMs: waits.splice(0), ...(workers.size > 0 ? { concurrency } : {}) });
    counts.clear();
  };
  setInterval(flush, 250).unref();
  // the adapter and the credentials were checked by `workers` before the pool started
  const redactor = new Redactor();
  if (config.registrationToken) redactor.setSource('REGISTRATION_TOKEN', [config.registrationToken]);
  // each process follows the file; the pool's supervisor logs its reloads and bad edits, once for the pool
  const credentials = CredentialStore.open(config.sellerCredentialsFile, redactor, { watch: true });
  const adapter = await loadAdapter(config, process.cwd(), redactor);
  const client = createRegistrationClient({ baseUrl: config.apiUrl, timeoutMs: config.apiTimeoutMs, adapter, redactor });
  // with WORKER_CONCURRENCY=auto the process runs as many jobs at once as the API's answer time calls for
  const adaptive = config.workerConcurrency !== 'auto' ? undefined : new AdaptiveConcurrency(slots, (now, why) => {
    log.debug({ from: slots, to: now, ...why }, 'jobs at once changed');
    slots = now;
    rebalance();
  });
  const api: typeof client = !adaptive ? client : {
    ...client,
    close: () => {
      adaptive.stop();
      client.close();
    },
    // a timeout, a failed connection or a 5xx is no answer time to size the pool by
    register: (...args) => adaptive.track(() => client.register(...args), (outcome) => outcome.kind !== 'transient'),
  };
  const ns = namespaceOf(config.queuePrefix);
  const tokens = adapter.tokens ? new SellerTokens({ redis, ns, client, credentials, redactor, log, timeoutMs: config.apiTimeoutMs }) : undefined;
  // pauses (operator's and credentials'), cancels and the outage: read every PAUSE_POLL_MS, by the
  // supervisor for the whole pool when it relays them (steering/steer-relay.ts); a credentials
  // pause ends once the seller's credentials in the file are not the ones refused
  const relayed = process.env[STEERING_RELAYED_ENV] === '1' && process.send !== undefined;
  const pauses = opts.pauses === false ? undefined : new PauseWatch(redis, ns, relayed ? RELAYED_READ_MS : PAUSE_POLL_MS);
  // once answers carry sellers' rules (or the adapter says they all do), a seller's first row after
  // a window without answers goes alone
  if (limiter instanceof SellerLimiter) {
    if (adapter.announcesRules) limiter.rulesAnnounced = () => true;
    else if (pauses) limiter.rulesAnnounced = () => pauses.rulesAnnounced();
  }
  // the queues this process promotes delayed rows on: rows held for a pause or an outage, rows deferred under a rule since raised
  const promoting = QueueSet.on(redis, []);
  pauses?.onRead((now) => {
    for (const [sellerId, pause] of now) {
      if (pause.by !== 'credentials' || sellerId === '*' || credentials.fingerprint(sellerId) === pause.fp) continue;
      void resumeSeller(redis, ns, sellerId, promoting, log, pause)
        .then((lifted) => lifted && log.info({ sellerId }, 'seller resumed: its credentials changed'))
        .catch((err: Error) => log.warn({ err, sellerId }, 'could not resume a seller whose credentials changed'));
    }
  });
  credentials.onChange(() => pauses?.recheck());
  // The worker's BullMQ commands share the limiter's connection, so a row's count reaches
  // Redis before its job is finished (countAhead): always on a single Redis; on a cluster
  // when the seller is pinned to the job's shard (seller-home.ts), its keys then being in
  // the queue's slot, on the same master's connection.
  const cluster = config.redisClusterNodes.length > 0;
  // a read of a key that never exists, in each queue's own slot (the nodes the workers block on)
  const kicker = createWakeKicker(() => Promise.all([...workers.keys()].map((prefix) => redis.exists(`${prefix}:wake`))));
  const processor = createProcessor({
    redis, limiter, api, log, credentials, pauses, queues: promoting,
    // this process's probe closed the breaker: the rows held for the outage go again
    onApiBack: () => void releaseHeld(redis, ns, undefined, promoting, log).catch((err: Error) => log.warn({ err }, 'could not release the rows held for the outage')),
    ...(tokens ? { tokens } : {}),
    countAhead: cluster ? (job) => job.data.home !== undefined : true,
    // the next row's permit is asked in the write that finishes this one, on the queue the
    // finished row came from (BullMQ fetches the next one from it); on a cluster, for a
    // seller pinned to that queue's shard only (lua/permit-next.lua)
    permitAheadFor: (job) => queueKeysOf(job.queueQualifiedName),
    onDelayed: (dueAt) => kicker.wakeAt(dueAt),
    now: () => Date.now(),
    maxAttempts: config.maxAttempts,
    uploadRetentionS: config.uploadRetentionS,
    onEvent: (event, sellerId, detail) => {
      const key = `${event}\t${sellerId}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (detail?.waitMs !== undefined) waits.push(detail.waitMs);
    },
  });

  const connection = redis;
  const runs: Array<Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  const startWorker = (prefix: string): Worker<RegistrationJob, ProcessResult> => {
    const worker = new FetchingWorker(QUEUE_NAME, processor, {
      connection,
      prefix,
      concurrency: 1,
      // Recovery from a killed process in seconds: the lock lapses after lockDuration,
      // and the stalled check (every lockDuration / 2) moves the job back to wait.
      lockDuration: config.lockDurationMs,
      stalledInterval: Math.max(1000, Math.floor(config.lockDurationMs / 2)),
      maxStalledCount: 3,
      settings: { backoffStrategy: (attemptsMade: number) => backoffWithJitter(attemptsMade) },
      ...(opts.queueLimiter ? { limiter: opts.queueLimiter } : {}),
      autorun: false,
    });
    const queue = queueKeysOf(worker.qualifiedName);
    worker.onFetch = (token) => processor.fetching(queue, token);
    worker.on('error', onWorkerError);
    worker.on('failed', (job: Job<RegistrationJob> | undefined, err: Error) => {
      // retried (BullMQ set no finishedOn): not over yet. A row's last attempt never gets here: the
      // processor returns its outcome, so this is a failure outside its decisions
      if (!job?.finishedOn) return;
      // Failed outside the processor's own decisions (an error on every try BullMQ allows): count it,
      // never drop it. A job failed for stalling too often is counted by the reconciler (reconcile.ts).
      const { sellerId, uploadId, row, home } = job.data;
      limiter
        .complete(
          { sellerId, home: home ?? sellerId, uploadId, row, member: rowMember(uploadId, row), sendId: '' },
          { outcome: 'failed', detail: { status: 'failed', outcome: 'failed', reason: err.message } },
          config.uploadRetentionS,
        )
        .catch((e: Error) => log.error({ err: e, sellerId, uploadId, row }, 'could not record a failed row'));
    });
    workers.set(prefix, worker);
    rebalance();
    runs.push(worker.run());
    return worker;
  };

  const stop = (why: string) => {
    stopping ??= (async () => {
      // The deadline first: nothing below (a dead log pipe, an unreachable Redis) may keep this process alive.
      const timer = setTimeout(() => process.exit(0), config.shutdownTimeoutMs);
      timer.unref();
      try {
        log.info({ why }, 'worker process stopping: finishing the jobs in hand');
      } catch {
        // the log's pipe may be gone with the supervisor
      }
      // BullMQ's close waits for the jobs in hand, then for its connections. After a
      // failover its blocking connection may still wait on the dead master, or a write
      // may wait for a node that will not answer: once the jobs in hand are settled,
      // the close gets CLOSE_GRACE_MS and the process goes on without it.
      const closed = Promise.all([...workers.values()].map((w) => w.close().catch(() => undefined)));
      await processor.settled();
      await Promise.race([closed, new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
      kicker.stop();
      pauses?.stop();
      credentials.close();
      flush();
      api.close();
      await promoting.close();
      redis.disconnect();
      connection.disconnect();
      process.exit(0);
    })();
  };
  // With the supervisor gone, its end of our stdout/stderr pipes may be closed too.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('disconnect', () => stop('the supervisor went away'));
  // A supervisor killed while this process was still loading left before the listener above:
  // forked with a channel that is already closed, the process would live on as an orphan
  if (process.send !== undefined && !process.connected) stop('the supervisor went away');
  process.on('message', (m: SupervisorMessage) => {
    if (m?.type === 'shutdown') stop('pool shutdown');
    else if (m?.type === 'steering') pauses?.applyRelayed(m.all);
  });

  // Every queue shard: this process's QUEUE_SHARDS, and every queue an upload went to
  // (another QUEUE_SHARDS, an earlier one): none is left without a worker.
  const serveAll = async () => {
    if (redis.status !== 'ready') return;
    const prefixes = new Set([...resolveShardPrefixes(config, redis as never), ...(await redis.zrange(queuesKey(ns), '0', '-1'))]);
    for (const prefix of prefixes) if (!workers.has(prefix) && !stopping) startWorker(prefix);
  };
  while (redis.status !== 'ready') await new Promise((r) => redis.once('ready', r));
  // a database REDIS_URL selects and this Redis lacks leaves the connection in database 0
  // (redis.ts): no worker starts there, whatever the supervisor's own check has said by now
  // (BullMQ's first stalled check writes a key as it starts)
  const missing = await missingDatabase(redis, config);
  if (missing !== undefined) {
    log.error(missing);
    process.exit(1);
  }
  await pauses?.start();
  await serveAll();
  if (workers.size === 0) startWorker(config.queuePrefix);
  setInterval(() => void serveAll().catch((err: Error) => onRedisError(err)), QUEUES_REFRESH_MS).unref();
  await Promise.all([...workers.values()].map((w) => w.waitUntilReady()));
  send({ type: 'ready' });
  log.info({ ns, queues: workers.size }, 'worker process ready');
  // runs grows as shards are added; the process ends with stop()
  for (let i = 0; i < runs.length; i++) await runs[i];
}
