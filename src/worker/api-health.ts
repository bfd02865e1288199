/**
 * What one worker process's calls say of the registration API, for the pool's breaker
 * (steering/outage.ts): its calls without a usable answer in a row, the answers it
 * notes in Redis (at most once a second), and the breaker opened and closed.
 */
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import type { PauseWatch } from '../steering/pause-watch.js';
import {
  FailureStreak, TRIP_AFTER, clearApiFailing, failingVerdict, markApiAnswered, markApiDown, markApiFailing, markApiUp, takeProbe,
  type FailingVerdict,
} from '../steering/outage.js';

/** When a call's permit was granted and its answer came, on Redis's clock (ms). */
export interface CallTimes {
  grantedAt: number;
  answeredAt: number;
}

export interface ApiHealthDeps {
  redis: RedisClient;
  /** The limiter's key namespace (keys.ts). */
  ns: string;
  log: Logger;
  /** The pauses in force, the breaker's among them; absent: the API never counts as unavailable (bench peers). */
  pauses?: PauseWatch;
  /** The host's clock (ms). */
  now: () => number;
  /** The breaker closed by this process's probe. */
  onApiBack?: () => void;
}

export class ApiHealth {
  /** This process's calls in a row without a usable answer. */
  private readonly streak = new FailureStreak();
  /** The latest answered row's permit and answer times, and when they were last written. */
  private readonly answered = { writtenAt: 0, granted: 0, answered: 0, timer: undefined as NodeJS.Timeout | undefined };

  constructor(private readonly deps: ApiHealthDeps) {}

  /** While the API counts as unavailable: true when this row goes as the pool's probe. */
  async mayProbe(): Promise<boolean> {
    return takeProbe(this.deps.redis, this.deps.ns).catch(() => false);
  }

  /** An answer came for a row after all (a registered row sent again answered): the streak starts again. */
  resetStreak(): void {
    this.streak.reset();
  }

  /**
   * A call's result for the breaker. `down`: the API now counts as unavailable; `verdict`: for
   * a call without a usable answer, what the other rows' answers say of it (failingVerdict;
   * undefined when Redis could not be asked), which also judges the row's last attempt.
   * `row`: the row it was for (its retries count once); `failingSince`: the permit time of
   * the row's first call without a usable answer, if one came before this call.
   */
  async noteAnswer(usable: boolean, row: string, at: CallTimes, failingSince: number | undefined): Promise<{ down: boolean; verdict?: FailingVerdict }> {
    const { redis, ns, log, pauses } = this.deps;
    if (!pauses) return { down: false };
    const now = this.deps.now();
    if (usable) {
      if (failingSince !== undefined) void clearApiFailing(redis, ns, row).catch(() => undefined);
      this.streak.reset();
      this.noteAnswered(at);
      if (pauses.apiDown()) {
        pauses.noteApi(undefined);
        if (await markApiUp(redis, ns, now).catch(() => false)) {
          log.info('the registration API answers again: the pool resumes sending');
          this.deps.onApiBack?.();
        }
      }
      return { down: false };
    }
    void markApiFailing(redis, ns, row, at.grantedAt).catch(() => undefined);
    if (pauses.apiDown()) return { down: true };
    const verdict = await failingVerdict(redis, ns, row, failingSince ?? at.grantedAt, failingSince !== undefined).catch(() => undefined);
    // only a call nothing tells from an outage counts: rows the API fails while it answers
    // others (several of a sheet's, their retries once the rest are done) must not stop the pool
    if (verdict !== undefined && verdict !== 'alone') return { down: false, verdict };
    if (!this.streak.note(false, now, row)) return { down: false, verdict };
    await this.unavailable({ callsWithoutAnswer: TRIP_AFTER });
    return { down: true, verdict };
  }

  /** Opens the breaker for the pool (`why`: what the log line says of it). */
  async unavailable(why: Record<string, unknown>): Promise<void> {
    const now = this.deps.now();
    this.deps.pauses?.noteApi({ since: now });
    if (await markApiDown(this.deps.redis, this.deps.ns, now).catch(() => false)) {
      this.deps.log.warn(why, 'the registration API is unavailable: the pool holds its rows (no attempt used) and probes every 2 s');
    }
  }

  /**
   * That the API answered, for rows deciding whether they failed in an outage: written at most
   * once a second by this process, the latest answered row's permit time and answer time on
   * Redis's clock, and the last ones of a second always (trailing), so that no answer goes
   * unsaid for longer than a second.
   */
  private noteAnswered(at: CallTimes): void {
    const answered = this.answered;
    answered.granted = Math.max(answered.granted, at.grantedAt);
    answered.answered = Math.max(answered.answered, at.answeredAt);
    if (answered.timer) return;
    const write = () => {
      answered.timer = undefined;
      answered.writtenAt = this.deps.now();
      void markApiAnswered(this.deps.redis, this.deps.ns, answered.granted, answered.answered).catch(() => undefined);
    };
    const wait = answered.writtenAt + 1000 - this.deps.now();
    if (wait <= 0) write();
    else (answered.timer = setTimeout(write, wait)).unref();
  }
}
