/**
 * A worker process's view of the steering hash (steer-key.ts): the pauses in
 * force (pauses.ts), the cancelled uploads, the API's outage and whether the
 * marketplace announces sellers' rules. One HGETALL every PAUSE_POLL_MS, or the
 * supervisor's read relayed to it (steer-relay.ts).
 */
import type { RedisClient } from '../redis.js';
import { RULES_ANNOUNCED } from '../rate-limit/seller-limits.js';
import { parseApiDown, type ApiDown } from './outage.js';
import { PAUSE_POLL_MS, pauseOf, pausesIn, type Pause } from './pauses.js';
import { API_DOWN, CANCEL, MARKETPLACE_RULES, steerKey } from './steer-key.js';

/** A worker process's view of the pauses, read every PAUSE_POLL_MS; the last one read while Redis is away. */
export class PauseWatch {
  private pauses = new Map<string, Pause>();
  /** Uploads cancelled (steering/cancel.ts), read with the pauses. */
  private cancels = new Set<string>();
  /** The API outage in force (steering/outage.ts), read with the pauses. */
  private down: ApiDown | undefined;
  /** The marketplace announces sellers' rules (rate-limit/seller-limits.ts), read with the pauses: known here, and in the hash as last read. */
  private announced = false;
  private announcedInRedis = false;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  /** Counts the supervisor's messages taken in: this process's own read, if one arrived meanwhile, is older. */
  private relayed = 0;
  private readonly listeners: Array<(pauses: ReadonlyMap<string, Pause>) => void> = [];
  private readonly upListeners: Array<() => void> = [];

  /**
   * @param readEveryMs how often the process reads the hash itself: PAUSE_POLL_MS, or
   * RELAYED_READ_MS when its supervisor sends it each change (steering/steer-relay.ts, apply)
   */
  constructor(private readonly redis: RedisClient, private readonly ns: string, private readonly readEveryMs = PAUSE_POLL_MS) {}

  async start(): Promise<void> {
    await this.refresh().catch(() => undefined);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.readEveryMs);
    this.timer.unref();
  }

  async refresh(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const relayedBefore = this.relayed;
      const all = await this.redis.hgetall(steerKey(this.ns));
      // The supervisor's read that came in meanwhile is at least as new: this one, issued
      // before it arrived, may be from before a pause (answered late behind this process's
      // busy connection), and would undo the pause until the next read here, RELAYED_READ_MS
      // later, while rows went. Its messages come in the order of its reads, which never overlap.
      if (this.relayed !== relayedBefore) return;
      this.apply(all);
    } finally {
      this.reading = false;
    }
  }

  /** Takes in the steering hash as the supervisor sent it (steering/steer-relay.ts). */
  applyRelayed(all: Record<string, string>): void {
    this.relayed++;
    this.apply(all);
  }

  /** Takes in the steering hash, read here or sent by the supervisor. */
  apply(all: Record<string, string>): void {
    this.pauses = pausesIn(all);
    this.cancels = new Set(Object.keys(all).filter((k) => k.startsWith(CANCEL)).map((k) => k.slice(CANCEL.length)));
    const wasDown = this.down !== undefined;
    this.down = parseApiDown(all[API_DOWN]);
    this.announcedInRedis = all[MARKETPLACE_RULES] === RULES_ANNOUNCED;
    this.announced ||= this.announcedInRedis;
    if (wasDown && !this.down) for (const l of this.upListeners) l();
    this.recheck();
  }

  /** Runs the onRead listeners on the pauses in force (e.g. after the credentials file changed). */
  recheck(): void {
    for (const l of this.listeners) l(this.pauses);
  }

  /** Called after each read (e.g. to lift credentials pauses whose credentials changed). */
  onRead(listener: (pauses: ReadonlyMap<string, Pause>) => void): void {
    this.listeners.push(listener);
  }

  of(sellerId: string): Pause | undefined {
    return this.pauses.size === 0 ? undefined : pauseOf(this.pauses, sellerId);
  }

  /** The outage in force, if any. */
  apiDown(): ApiDown | undefined {
    return this.down;
  }

  /** This process opened or closed the breaker: known here before the next read. */
  noteApi(down: ApiDown | undefined): void {
    this.down = down;
  }

  /** Whether an answer has shown that the marketplace announces sellers' rules. */
  rulesAnnounced(): boolean {
    return this.announced;
  }

  /** This process saw a rule in an answer: known here before the next read. Returns whether the hash lacked it at the last read. */
  noteRulesAnnounced(): boolean {
    this.announced = true;
    return !this.announcedInRedis;
  }

  /** Called when a read finds the breaker closed after it was open. */
  onApiUp(listener: () => void): void {
    this.upListeners.push(listener);
  }

  cancelled(uploadId: string): boolean {
    return this.cancels.size > 0 && this.cancels.has(uploadId);
  }

  /** Sets a pause here at once, before the next read (the process that paused knows first). */
  note(sellerId: string, pause: Pause): void {
    this.pauses = new Map(this.pauses).set(sellerId, pause);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
