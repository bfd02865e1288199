/**
 * Secrets out of every message: the credentials' values, REGISTRATION_TOKEN and the
 * tokens the pool holds are replaced by "[redacted]" in any text the pool writes
 * from an adapter's or a marketplace's words (reasons, errors, log fields).
 *
 * A secret of 8 characters or more is masked wherever it appears, inside a word too.
 * A shorter one (a PIN, a shop number, a region code, a scope) is masked where it
 * stands as a word of its own: masked inside words, "ab" would take every "ab" out of
 * a seller's reasons, and a shop number 1000 turned "from 1 to 1000000000" into
 * "from 1 to [redacted]000000". A value that short shows up inside words by chance,
 * not because it leaked.
 */
const MASK = '[redacted]';
/** Tokens remembered at most (the most recent): enough for every seller a process serves at once. */
const MAX_TOKENS = 10_000;
/** Shorter than this, a secret is masked only as a word of its own. */
const INSIDE_WORDS = 8;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class Redactor {
  private readonly sources = new Map<string, string[]>();
  private readonly tokens = new Set<string>();
  private compiled: { long: string[]; short: RegExp | undefined } | undefined;

  /** Replaces the secrets of one source (e.g. "credentials" on every reload). */
  setSource(name: string, secrets: string[]): void {
    this.sources.set(name, secrets.filter((s) => s.length > 0));
    this.compiled = undefined;
  }

  addToken(token: string): void {
    if (token.length === 0 || this.tokens.has(token)) return;
    this.tokens.add(token);
    if (this.tokens.size > MAX_TOKENS) this.tokens.delete(this.tokens.values().next().value!);
    this.compiled = undefined;
  }

  redact(text: string): string {
    const { long, short } = (this.compiled ??= this.compile());
    let out = text;
    for (const s of long) if (out.includes(s)) out = out.split(s).join(MASK);
    return short ? out.replace(short, MASK) : out;
  }

  private compile(): { long: string[]; short: RegExp | undefined } {
    const all = [...new Set([...[...this.sources.values()].flat(), ...this.tokens])];
    // longest first, so that a secret holding another is masked whole
    const long = all.filter((s) => s.length >= INSIDE_WORDS).sort((a, b) => b.length - a.length);
    const short = all.filter((s) => s.length < INSIDE_WORDS).sort((a, b) => b.length - a.length);
    return {
      long,
      short: short.length ? new RegExp(`(?<![\\p{L}\\p{N}_])(?:${short.map(escape).join('|')})(?![\\p{L}\\p{N}_])`, 'gu') : undefined,
    };
  }
}
