/**
 * SELLER_CREDENTIALS_FILE (marketplace.md): `{ "<sellerId>": { ...fields }, "*": { ...fields } }`.
 * Read at start-up (a bad file stops it with one sentence) and again within
 * 5 s of every change, without a restart; a bad edit keeps the last good
 * contents and logs one warning. No message ever quotes the file's contents.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../config-error.js';
import type { Logger } from '../logger.js';
import type { Credentials } from './adapter.js';
import type { Redactor } from './redactor.js';

type Entries = Readonly<Record<string, Credentials>>;

/** How often the file's size, time and inode are looked at (ms): a change is read within this. */
export const CREDENTIALS_POLL_MS = 1000;

/** The file's contents -> its entries. @throws Error whose message says what is wrong, never what is in it. */
export function parseCredentials(text: string): Entries {
  let value: unknown;
  try {
    // a byte-order mark, as editors on Windows save UTF-8, is not part of the JSON
    value = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch {
    throw new Error('it is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('it is not a JSON object of sellers');
  for (const [seller, entry] of Object.entries(value)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new Error(`the entry of ${JSON.stringify(seller.slice(0, 64))} is not an object of fields`);
    }
  }
  return Object.freeze(value as Entries);
}

/**
 * Every value in the entries that could be a secret (for the redactor): each string, and each
 * number of 4 digits or more (a PIN; shorter ones are counts and flags, and would mask every
 * row number in a reason).
 */
function secretsIn(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') {
    out.push(value);
  } else if (typeof value === 'number' && String(value).length >= 4) {
    out.push(String(value));
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) secretsIn(v, out);
  }
  return out;
}

export class CredentialStore {
  private entries: Entries = {};
  private seen = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<() => void> = [];
  private lastBad = '';

  private constructor(
    readonly file: string | undefined,
    private readonly redactor: Redactor,
    private readonly log: Logger | undefined,
  ) {}

  /**
   * Reads the file (none: every seller has no credentials) and, with `watch`, looks
   * for changes every CREDENTIALS_POLL_MS.
   * @throws ConfigError naming SELLER_CREDENTIALS_FILE when it cannot be read or is not a JSON object.
   */
  static open(given: string | undefined, redactor: Redactor, opts: { log?: Logger; watch?: boolean; cwd?: string } = {}): CredentialStore {
    const file = given ? resolve(opts.cwd ?? process.cwd(), given) : undefined;
    const store = new CredentialStore(file, redactor, opts.log);
    if (!file) return store;
    try {
      store.seen = store.signature();
      store.use(parseCredentials(readFileSync(file, 'utf8')));
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as NodeJS.ErrnoException).code === 'EACCES' ? 'it cannot be read (permission denied)' : (err as Error).message;
      throw new ConfigError(`SELLER_CREDENTIALS_FILE=${JSON.stringify(given)} is invalid: ${why}.`);
    }
    if (opts.watch) {
      store.timer = setInterval(() => store.check(), CREDENTIALS_POLL_MS);
      store.timer.unref();
    }
    return store;
  }

  private signature(): string {
    const s = statSync(this.file!);
    return `${s.mtimeMs}:${s.size}:${s.ino}:${s.ctimeMs}`;
  }

  private use(entries: Entries): void {
    this.entries = entries;
    this.redactor.setSource('credentials', secretsIn(entries, []));
  }

  /** Looks at the file now; reads it when it changed. Returns true when the contents in use changed. */
  check(): boolean {
    if (!this.file) return false;
    let sig: string;
    try {
      sig = this.signature();
    } catch {
      sig = 'missing';
    }
    if (sig === this.seen) return false;
    this.seen = sig;
    let next: Entries;
    try {
      next = parseCredentials(readFileSync(this.file, 'utf8'));
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file is gone' : (err as Error).message;
      if (why !== this.lastBad) this.log?.warn({ file: this.file, problem: why }, 'SELLER_CREDENTIALS_FILE changed but cannot be used: keeping its last good contents');
      this.lastBad = why;
      return false;
    }
    this.lastBad = '';
    const before = JSON.stringify(this.entries);
    this.use(next);
    if (JSON.stringify(next) === before) return false;
    this.log?.info({ file: this.file, sellers: Object.keys(next).length }, 'seller credentials reloaded');
    for (const l of this.listeners) l();
    return true;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The seller's entry, else the `"*"` entry, else undefined. */
  for(sellerId: string): Credentials | undefined {
    return Object.hasOwn(this.entries, sellerId) ? this.entries[sellerId] : this.entries['*'];
  }

  /** A digest of the seller's credentials ("none" without any): tells a change without keeping or showing them. */
  fingerprint(sellerId: string): string {
    const entry = this.for(sellerId);
    if (entry === undefined) return 'none';
    return createHash('sha256').update(JSON.stringify(entry)).digest('hex').slice(0, 16);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
