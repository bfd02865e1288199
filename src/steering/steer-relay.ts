/**
 * One read of the steering hash for the whole pool. Each worker process used to
 * read it with its own HGETALL every PAUSE_POLL_MS: an idle 16-process pool
 * spent about 4 ms of CPU a second per process on those reads alone (179 ms a
 * second for the whole pool idle then, 113 now) and sent Redis 160 reads a
 * second (the pool's 190 commands a second idle then, 43-47 now). The
 * supervisor now reads it at the same pace and sends it to its processes only
 * when it changed, so a pause, a cancel or an outage reaches a process as soon
 * as it did (within PAUSE_POLL_MS and one IPC message).
 *
 * A process started by the supervisor reads the hash itself once when it starts
 * and then every RELAYED_READ_MS (a message lost, e.g. while it was starting);
 * one started on its own (tests, the bench's bare pools) reads every
 * PAUSE_POLL_MS as before (PauseWatch in steering/pause-watch.ts).
 */
import type { RedisClient } from '../redis.js';
import { PAUSE_POLL_MS } from './pauses.js';
import { steerKey } from './steer-key.js';

/** Set by the supervisor in its processes' environment: the steering hash comes from it. */
export const STEERING_RELAYED_ENV = 'BULK_REGISTER_STEERING_RELAYED';
/** How often a relayed process still reads the hash itself (ms). */
export const RELAYED_READ_MS = 5000;

export type SteeringMessage = { type: 'steering'; all: Record<string, string> };

export class SteeringRelay {
  private last: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly ns: string,
    private readonly send: (message: SteeringMessage) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.read(), PAUSE_POLL_MS);
    this.timer.unref();
  }

  /** Reads the hash and sends it when it differs from what was sent last. */
  async read(): Promise<void> {
    if (this.reading || this.redis.status !== 'ready') return;
    this.reading = true;
    try {
      const all = await this.redis.hgetall(steerKey(this.ns));
      const seen = JSON.stringify(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      if (seen === this.last) return;
      this.last = seen;
      this.send({ type: 'steering', all });
    } catch {
      // Redis away: the processes keep what they last had, as when they read it themselves
    } finally {
      this.reading = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
