/**
 * The rules the marketplace announces in its answers (marketplace.md), written into
 * the seller's limiter by the process that read them: in force from the seller's next
 * permit. A rule is written again only when it changed, or after RULE_REWRITE_MS.
 */
import type { Logger } from '../logger.js';
import { sellerKeys } from '../keys.js';
import type { RedisClient } from '../redis.js';
import type { LimiterSettings } from '../rate-limit/limiter.js';
import type { AnnouncedRule } from '../registration/adapter.js';
import { announceRule, noteRulesAnnounced } from '../rate-limit/seller-limits.js';
import type { PauseWatch } from '../steering/pause-watch.js';
import type { QueueSet } from '../queue.js';
import { bringDeferredForward, ruleRaised } from '../upload/deferral.js';

/** How long a process trusts that the rule it last announced for a seller is the one in Redis (ms): then it writes it again. */
const RULE_REWRITE_MS = 10_000;

/** Sellers whose last rule a process remembers, at most. */
const REMEMBERED = 10_000;

export interface AnnouncedRulesDeps {
  redis: RedisClient;
  /** The limiter's key namespace (keys.ts). */
  ns: string;
  log: Logger;
  settings: LimiterSettings;
  /** The host's clock (ms). */
  now: () => number;
  pauses?: PauseWatch;
  /** The queues, for bringing a seller's deferred rows forward when its rule is raised (upload/deferral.ts). */
  queues?: QueueSet;
}

export class AnnouncedRules {
  /** Rules this process last wrote, by seller, and when (oldest first). */
  private readonly written = new Map<string, { value: string; at: number }>();

  constructor(private readonly deps: AnnouncedRulesDeps) {}

  /** The marketplace announced `rule` for the seller (`home`: the hash tag of its keys). */
  async note(sellerId: string, home: string, rule: AnnouncedRule): Promise<void> {
    const { redis, ns, log } = this.deps;
    const value = `${rule.max}/${rule.windowMs}`;
    const last = this.written.get(sellerId);
    const now = this.deps.now();
    if (last && last.value === value && now - last.at < RULE_REWRITE_MS) return;
    // the pool learns that the marketplace announces rules (seller-limits.ts): known in this
    // process at once, in the others from the steering hash, written while its last read lacked it
    if (this.deps.pauses?.noteRulesAnnounced()) {
      void noteRulesAnnounced(redis, ns).catch((err: Error) => log.warn({ err }, 'could not record that the marketplace announces rules; written again with the next rule'));
    }
    const before = await announceRule(redis, ns, sellerId, rule, home);
    if (!last || last.value !== value) log.info({ sellerId, max: rule.max, windowMs: rule.windowMs }, 'the marketplace announced the seller\'s rule: in force from the next permit');
    // a higher rule: rows the producer deferred under the old one ask now (only the process whose write replaced it)
    const { queues } = this.deps;
    if (queues && before !== value && ruleRaised(before, value, this.deps.settings)) {
      void bringDeferredForward(redis, sellerKeys(ns, sellerId, home), queues, log)
        .then((rows) => rows > 0 && log.info({ sellerId, rows, max: rule.max, windowMs: rule.windowMs }, 'the seller\'s rule was raised: its deferred rows ask for permits now'))
        .catch((err: Error) => log.warn({ err, sellerId }, 'could not bring the seller\'s deferred rows forward; they wait for their windows'));
    }
    this.written.delete(sellerId);
    this.written.set(sellerId, { value, at: now });
    if (this.written.size > REMEMBERED) this.written.delete(this.written.keys().next().value!);
  }
}
