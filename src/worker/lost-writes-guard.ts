/**
 * A worker process's guard against a Redis that lost its last writes: the gate
 * in front of every permit, closed on a (re)connect or a change of masters
 * until the check has an answer (rate-limit/lost-writes.ts on a single Redis
 * or through Sentinel, rate-limit/cluster-failover.ts on Redis Cluster).
 */
import { Cluster, ReplyError } from 'ioredis';
import type { Config } from '../config.js';
import { namespaceOf } from '../keys.js';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import { checkClusterGrants, masterLayout, masterRanges, recordedSlotSuspects, type SlotRange } from '../rate-limit/cluster-failover.js';
import { keySlot } from '../queue-shards.js';
import type { SellerLimiter } from '../rate-limit/limiter.js';
import { checkLostWrites, recordedSuspectUntil, SETTLE_MS } from '../rate-limit/lost-writes.js';

/**
 * On every (re)connect, before any permit is asked: has this Redis lost writes
 * (lost-writes.ts)? If so, no send until a whole window has passed. After a
 * change of master, sends wait SETTLE_MS for the other workers' checks, and
 * every second the worker reads whether another worker found writes missing.
 */
export function guardLostWrites(redis: RedisClient, limiter: SellerLimiter, config: Config, log: Logger): void {
  let release: (() => void) | undefined;
  const close = () => {
    if (!release) limiter.gate = new Promise<void>((resolve) => { release = resolve; });
  };
  const open = () => {
    limiter.gate = undefined;
    release?.();
    release = undefined;
  };
  const ns = namespaceOf(config.queuePrefix);
  const suspect = (until: number, why = 'another worker found writes missing') => {
    if (until <= limiter.suspectUntil) return;
    limiter.suspectUntil = until;
    log.warn({ suspectUntil: until, why }, 'Redis may have lost its last writes (it failed over or restarted): no seller sends until a whole window has passed');
  };
  close();
  redis.on('close', () => {
    limiter.connectionDrops++;
    close();
  });
  // the gate opens only once the check has an answer: a Redis that cannot be checked is not trusted
  let seen: Parameters<typeof checkLostWrites>[4];
  const check = (): void => {
    const grant = limiter.lastGrant;
    checkLostWrites(redis, ns, config.rateLimitWindowMs, config.rateLimitGuardMs, seen, grant)
      .then(async ({ until, settleUntil, now, seen: current, why }) => {
        // that grant has given its evidence: a later check must not count it lost again
        if (limiter.lastGrant === grant) limiter.lastGrant = undefined;
        seen = current;
        suspect(until, why);
        if (settleUntil > now) {
          log.info({ settleMs: settleUntil - now }, 'Redis master changed: sends wait while every worker checks for lost writes');
          await new Promise((r) => setTimeout(r, settleUntil - now));
          suspect((await recordedSuspectUntil(redis, ns)).until);
        }
        open();
      })
      .catch((err: Error) => {
        // a managed Redis may refuse INFO outright: then say so and go on unchecked
        if (err instanceof ReplyError && !/^(LOADING|BUSY|TRYAGAIN)/.test(err.message)) {
          log.warn({ err }, 'cannot check Redis for lost writes (INFO refused): sends go on without that check');
          open();
          return;
        }
        log.warn({ err }, 'could not check Redis for lost writes; trying again');
        setTimeout(() => { if (redis.status === 'ready') check(); }, 200).unref();
      });
  };
  redis.on('ready', check);
  // a worker that reconnected later may find writes missing after this one opened
  setInterval(() => {
    if (redis.status !== 'ready' || limiter.gate) return;
    recordedSuspectUntil(redis, ns).then(({ until }) => suspect(until), () => undefined);
  }, 1000).unref();
}

/**
 * Redis Cluster (cluster-failover.ts): when the masters change, no send until
 * the cluster settled and this process's recent grants were found on their
 * masters; a missing one pauses the sellers of that master for a window. Every
 * second the worker reads whether another worker found one missing.
 */
export function guardClusterFailover(cluster: Cluster & RedisClient, limiter: SellerLimiter, config: Config, log: Logger): void {
  limiter.grants = new Map();
  const slots = new Float64Array(16384);
  limiter.suspectSlots = slots;
  const ns = namespaceOf(config.queuePrefix);
  const spanMs = config.rateLimitWindowMs + config.rateLimitGuardMs;
  let release: (() => void) | undefined;
  let layout = '';
  let checking = false;
  let again = false;
  // a worker of an earlier version records one time for every seller: kept to as well
  const suspectAll = (until: number, why: string) => {
    if (until <= limiter.suspectUntil) return;
    limiter.suspectUntil = until;
    log.warn({ suspectUntil: until, why }, 'a Redis master may have lost its last writes (it failed over): no seller sends until a whole window has passed');
  };
  const suspect = (ranges: SlotRange[], until: number, why: string) => {
    let later = false;
    for (const [a, b] of ranges) {
      for (let slot = a; slot <= b; slot++) {
        if (slots[slot]! < until) {
          slots[slot] = until;
          later = true;
        }
      }
    }
    if (!later) return;
    log.warn({ suspectUntil: until, slots: ranges.map(([a, b]) => `${a}-${b}`).join(','), why },
      'a Redis master may have lost its last writes (it failed over): its sellers send nothing until a whole window has passed');
  };
  const recorded = async () => {
    const { ranges, all } = await recordedSlotSuspects(cluster, ns);
    for (const { range, until } of ranges) suspect([range], until, 'another worker found writes missing');
    suspectAll(all, 'another worker found writes missing');
  };
  const check = async (): Promise<void> => {
    if (checking) { again = true; return; }
    checking = true;
    try {
      do {
        again = false;
        // let the failover finish and the other processes report what they miss
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        while (cluster.status !== 'ready') await new Promise((r) => setTimeout(r, 200));
        const lost = await checkClusterGrants(cluster, ns, spanMs, limiter.grants!.values(), (key) => masterRanges(cluster.slots, keySlot(key)));
        for (const { until, missing, ranges } of lost) suspect(ranges, until, `this worker's grant ${missing.sendId} (${missing.sent}) is not on its master any more`);
        await recorded();
      } while (again);
      limiter.gate = undefined;
      release?.();
      release = undefined;
    } catch (err) {
      log.warn({ err }, 'could not check the cluster for lost writes; trying again');
      checking = false;
      setTimeout(() => void check(), 500).unref();
      return;
    }
    checking = false;
  };
  const changed = (why: string) => {
    limiter.connectionDrops++;
    if (!release) {
      limiter.gate = new Promise<void>((resolve) => { release = resolve; });
      log.info({ why }, 'Redis Cluster masters changed: sends wait while every worker checks for lost writes');
    }
    void check();
  };
  cluster.on('-node', () => changed('a node left'));
  cluster.on('node error', () => changed('a node failed'));
  cluster.on('refresh', () => {
    const now = masterLayout(cluster.slots);
    if (layout !== '' && now !== layout) changed('the slots moved to another master');
    layout = now;
  });
  setInterval(() => {
    if (cluster.status !== 'ready' || limiter.gate) return;
    recorded().catch(() => undefined);
  }, 1000).unref();
}
