/**
 * A brute-force model of lua/sliding-window.lua and lua/complete-send.lua for the
 * property test: plain maps, fed the times Redis reported. Entries older than the
 * span are dropped when the script drops them (once `sent` holds L entries), since
 * an answer moves its send's entry up only while the entry is still there.
 */
import { ANSWER_SAMPLE_EVERY } from '../../src/rate-limit/limiter.js';

export interface ModelSettings {
  limit: number;
  windowMs: number;
  guardMs: number;
  holdMs: number;
}

export interface ModelDecision {
  granted: boolean;
  waitMs: number;
  slot: number;
}

export class SlidingWindowModel {
  /** row member -> plan score */
  private plan = new Map<string, number>();
  /** send id -> place */
  private sent = new Map<string, number>();
  /** send id -> when it went (its grant's slot), as the worker notes it for complete-send.lua */
  private sentAt = new Map<string, number>();
  private answer: number | undefined;
  /** Sends granted on a re-check (at their planned slot): their answers always join `answer`. */
  private plannedSends = new Set<string>();
  /** The others' answers join one in ANSWER_SAMPLE_EVERY, counted as the limiter counts them. */
  private unplannedAnswers = 0;
  /** The worker's answer hint passed with the current ask (see sliding-window.lua). */
  private hint: { ms: number; at: number } | undefined;
  private now = 0;

  private get answerTime(): number {
    const hint = this.hint && this.now - this.hint.at <= this.span * 10 ? this.hint.ms : undefined;
    return hint ?? this.answer ?? 0;
  }

  private get margin(): number {
    return Math.ceil(this.answerTime) + 5;
  }

  /** What a far slot adds: 0.7 of the answer time, + 5 ms (a short guess costs a wait in-process, a long one the span). */
  private get planMargin(): number {
    return Math.ceil(this.answerTime * 0.7) + 5;
  }

  constructor(private readonly s: ModelSettings) {}

  private get span() {
    return this.s.windowMs + this.s.guardMs;
  }

  private live(map: Map<string, number>, now: number): number[] {
    return [...map.values()].filter((v) => v > now - this.span).sort((a, b) => b - a);
  }

  /** [when sent frees a place, whether that is certain (no send in flight decides it)] */
  private sentFreeAt(now: number): [number, boolean] {
    if (this.sent.size >= this.s.limit) this.trim(now);
    const live = this.live(this.sent, now);
    if (live.length < this.s.limit) return [now, true];
    const score = live[this.s.limit - 1]!;
    if (score > now) return [now + Math.min(score - now + this.span, Math.max(20, this.margin)), false];
    return [score + this.span, true];
  }

  private trim(now: number): void {
    for (const map of [this.plan, this.sent]) for (const [k, v] of map) if (v <= now - this.span) map.delete(k);
  }

  acquire(member: string, sendId: string, now: number, hint?: { ms: number; at: number }): ModelDecision {
    this.hint = hint;
    this.now = now;
    const reserve = Math.min(150, Math.floor(this.span / 4));
    const recheckReserve = Math.min(1000, Math.floor(this.span / 4));
    const margin = this.planMargin;
    const grant = (at: number, slot: number, planned: boolean): ModelDecision => {
      at = Math.max(at, now);
      this.sent.set(sendId, at + this.s.holdMs);
      this.sentAt.set(sendId, at);
      if (planned) this.plannedSends.add(sendId);
      this.plan.set(member, at);
      return { granted: true, waitMs: at - now, slot };
    };
    let planned = this.plan.get(member);
    // a slot older than the span is a stale entry: the row plans afresh
    if (planned !== undefined && planned <= now - this.span) planned = undefined;
    if (planned !== undefined) {
      if (planned > now + reserve) return { granted: false, waitMs: planned - now, slot: planned };
      const [free, certain] = this.sentFreeAt(now);
      // a certain free time replaces the planned slot, which was planned with a guessed answer time
      const due = certain ? free : Math.max(planned, free);
      if (certain && due <= now + recheckReserve) return grant(due, planned, true);
      return { granted: false, waitMs: due - now, slot: planned };
    }
    let slot = now;
    const livePlan = this.live(this.plan, now);
    const lth = livePlan[this.s.limit - 1];
    if (lth !== undefined) {
      slot = Math.max(slot, lth + this.span);
      if (lth > now) slot += margin;
    }
    slot = Math.max(slot, livePlan[0] ?? now);
    if (slot <= now + reserve) {
      const [free, certain] = this.sentFreeAt(now);
      const due = Math.max(slot, free);
      if (certain && due <= now + reserve) return grant(due, due, false);
      slot = due;
    }
    this.plan.set(member, slot);
    return { granted: false, waitMs: slot - now, slot };
  }

  /**
   * ZADD XX semantics: entries trimmed by an earlier call stay gone. The row's
   * plan entry stays at its slot (only `sent` moves to the answer). The answer
   * time is measured from when this send went (a row asked again since may hold
   * a newer slot), else from the row's slot.
   */
  complete(member: string, sendId: string, now: number): void {
    const slot = this.plan.get(member);
    const sentAt = this.sentAt.get(sendId) ?? slot;
    this.sentAt.delete(sendId);
    const sampled = this.plannedSends.delete(sendId) || this.unplannedAnswers++ % ANSWER_SAMPLE_EVERY === 0;
    if (this.sent.has(sendId)) this.sent.set(sendId, now);
    if (sampled && sentAt !== undefined && now >= sentAt && now - sentAt < this.span) {
      const sample = now - sentAt;
      this.answer = this.answer === undefined ? sample : Math.floor(this.answer * 0.8 + sample * 0.2);
    }
  }
}
