/**
 * Secrets out of every message: the credentials' values, REGISTRATION_TOKEN and the
 * tokens the pool holds are replaced by "[redacted]" in any text the pool writes
 * from an adapter's or a marketplace's words (reasons, errors, log fields).
 */
const MASK = '[redacted]';
/** Tokens remembered at most (the most recent): enough for every seller a process serves at once. */
const MAX_TOKENS = 10_000;

export class Redactor {
  private readonly sources = new Map<string, string[]>();
  private readonly tokens = new Set<string>();
  private sorted: string[] | undefined = [];

  /** Replaces the secrets of one source (e.g. "credentials" on every reload). */
  setSource(name: string, secrets: string[]): void {
    this.sources.set(name, secrets.filter((s) => s.length >= 4));
    this.sorted = undefined;
  }

  addToken(token: string): void {
    if (token.length < 4 || this.tokens.has(token)) return;
    this.tokens.add(token);
    if (this.tokens.size > MAX_TOKENS) this.tokens.delete(this.tokens.values().next().value!);
    this.sorted = undefined;
  }

  redact(text: string): string {
    if (this.sorted === undefined) {
      // longest first, so that a secret holding another is masked whole
      this.sorted = [...new Set([...[...this.sources.values()].flat(), ...this.tokens])].sort((a, b) => b.length - a.length);
    }
    let out = text;
    for (const s of this.sorted) if (out.includes(s)) out = out.split(s).join(MASK);
    return out;
  }
}
