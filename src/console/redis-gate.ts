/**
 * How long a console request waits for Redis. The console's connection waits for
 * Redis forever (for the live feed); a request queued behind it would hang and
 * then take effect long after its client gave up, so a request gets 503 instead.
 */
import type { RedisClient } from '../redis.js';

/**
 * How long a request waits for a Redis that is connected but does not answer (frozen,
 * or failing over) before it gets 503. One whose connection is not ready gets 503 after
 * READY_WAIT_MS.
 */
export const REDIS_WAIT_MS = 10_000;
/**
 * How long a request waits for a connection that is not ready (the console just
 * started, or Redis is reconnecting) before it gets 503: a start-up race is not
 * an outage, and a Redis that is down is said so within this.
 */
export const READY_WAIT_MS = 2000;

/** What `orLate` gives for work that took longer than the wait. */
export const LATE = Symbol('late');

export interface RedisGate {
  /** Whether the connection is ready, or becomes so within READY_WAIT_MS (and the wait). */
  ready(): Promise<boolean>;
  /** `work`'s result, or LATE once it has taken the wait (it goes on; its result is then dropped). */
  orLate<T>(work: Promise<T>): Promise<T | typeof LATE>;
  /** The wait for a Redis that does not answer (ms). */
  readonly waitMs: number;
}

export function redisGate(redis: RedisClient, waitMs = REDIS_WAIT_MS): RedisGate {
  // one wait for 'ready' shared by every request that comes while the connection is not
  let readyWait: Promise<boolean> | undefined;
  const ready = (): Promise<boolean> => {
    if (redis.status === 'ready') return Promise.resolve(true);
    readyWait ??= new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        readyWait = undefined;
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(redis.status === 'ready'), Math.min(READY_WAIT_MS, waitMs));
      redis.on('ready', onReady);
    });
    return readyWait;
  };
  const orLate = <T>(work: Promise<T>): Promise<T | typeof LATE> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => { timer = setTimeout(() => resolve(LATE), waitMs); });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  };
  return { ready, orLate, waitMs };
}
