/**
 * A worker process's permits: each asked in the write that hands it the row (behind the
 * completion of the row before, or behind a fetch of its own: lua/permit-next.lua), kept
 * by the lock token BullMQ hands that row with, and taken by the row when it starts; or,
 * when none was asked or it was for another job, asked by the row itself.
 */
import type { Logger } from '../logger.js';
import type { FinishedRow, Permit, PermitAhead, PermitLimiter, QueueKeys } from '../rate-limit/limiter.js';

export class PermitsAhead {
  /** Permits asked ahead, by the lock token BullMQ hands the next job with. */
  private readonly asked = new Map<string, Promise<PermitAhead | undefined>>();
  // A send id's nonce: unique per HTTP attempt across the pool (this process's random
  // prefix, then a count), without reading the system's random source at every row
  // (randomBytes per row was 2.4 % of a worker's CPU at capacity, in a CPU profile)
  private sends = 0;

  /** `noncePrefix`: random, this process's own. */
  constructor(private readonly limiter: PermitLimiter, private readonly log: Logger, private readonly noncePrefix: string) {}

  private nonce(): string {
    return `${this.noncePrefix}${(this.sends++).toString(36)}`;
  }

  /**
   * Issued last in the write that finishes a row (`finished`) or fetches one: the permit for the
   * row BullMQ fetches with it. `together`: how many such asks the write holds; `position`: this
   * one's among them.
   */
  ask(queue: QueueKeys, token: string, finished: FinishedRow | undefined, together: number, position: number): void {
    // the completions went in the order of their asks, each pushing the job it fetched to the
    // head of the active list: this one's job lies behind those fetched after it
    const asked: Promise<PermitAhead | undefined> = this.limiter.permitNext!(queue, token, this.nonce(), finished, together, together - 1 - position)
      .catch((err: Error) => {
        this.log.debug({ err }, 'no permit ahead: the row will ask for its own');
        return undefined;
      })
      .then((ahead) => {
        // none fetched: nothing will come for this token
        if (!ahead && this.asked.get(token) === asked) this.asked.delete(token);
        return ahead;
      });
    this.asked.set(token, asked);
  }

  /** The permit asked ahead for the job `jobId`, handed with `token`, if any (taken: asked once). */
  async take(jobId: string | undefined, token: string | undefined): Promise<PermitAhead | undefined> {
    const asked = token === undefined ? undefined : this.asked.get(token);
    if (!asked) return undefined;
    this.asked.delete(token!);
    const ahead = await asked;
    if (ahead && ahead.jobId === jobId) return ahead;
    // BullMQ hands a job fetched by a completion the token of the finished one, and
    // permit-next.lua found the job locked with it: another job here means that changed
    if (ahead) this.log.warn({ askedFor: ahead.jobId, jobId }, 'a permit asked ahead was for another job; the row asks for its own');
    return undefined;
  }

  /** The row's permit: `ahead` (the one asked ahead for it), else one asked now. `home`: the hash tag of the seller's keys. */
  async permitFor(ahead: PermitAhead | undefined, sellerId: string, member: string, home: string): Promise<{ permit: Permit; sendId: string }> {
    if (ahead) return ahead;
    const sendId = `${member}#${this.nonce()}`;
    return { permit: await this.limiter.acquire(sellerId, member, sendId, home), sendId };
  }
}
