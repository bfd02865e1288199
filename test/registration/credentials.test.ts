import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CredentialStore, parseCredentials } from '../../src/registration/credentials.js';
import { Redactor } from '../../src/registration/redactor.js';
import { ConfigError } from '../../src/config.js';

function logSpy() {
  const lines: Array<{ level: string; obj: unknown; msg: string }> = [];
  const at = (level: string) => (obj: unknown, msg: string) => lines.push({ level, obj, msg });
  return { lines, log: { warn: at('warn'), info: at('info'), debug: at('debug'), error: at('error') } as never };
}

/** Writes and moves the file's time on, as an editor's save does. */
function save(file: string, text: string, tick: number) {
  writeFileSync(file, text);
  const t = new Date(Date.now() + tick * 1000);
  utimesSync(file, t, t);
}

describe('SELLER_CREDENTIALS_FILE', () => {
  it('gives each seller its entry, else "*", and a fingerprint that changes with it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'creds-'));
    const file = join(dir, 'c.json');
    save(file, JSON.stringify({ S1: { clientSecret: 'alpha-secret-1' }, '*': { clientSecret: 'shared-secret-2' } }), 0);
    const store = CredentialStore.open(file, new Redactor());
    expect(store.for('S1')).toEqual({ clientSecret: 'alpha-secret-1' });
    expect(store.for('S2')).toEqual({ clientSecret: 'shared-secret-2' });
    expect(store.fingerprint('S1')).toMatch(/^[0-9a-f]{16}$/);
    expect(store.fingerprint('S1')).not.toBe(store.fingerprint('S2'));
    expect(CredentialStore.open(undefined, new Redactor()).fingerprint('S1')).toBe('none');
  });

  it('keeps the last good contents after a bad edit, with one warning, and takes the next good one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'creds-'));
    const file = join(dir, 'c.json');
    save(file, JSON.stringify({ S1: { clientSecret: 'first-secret-1' } }), 0);
    const redactor = new Redactor();
    const { lines, log } = logSpy();
    const store = CredentialStore.open(file, redactor, { log });
    let changes = 0;
    store.onChange(() => changes++);
    save(file, '{ "S1": { "clientSecret": "half-writ', 1);
    expect(store.check()).toBe(false);
    save(file, '{ "S1": { "clientSecret": "half-written-', 2);
    expect(store.check()).toBe(false);
    expect(store.for('S1')).toEqual({ clientSecret: 'first-secret-1' });
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toBe('SELLER_CREDENTIALS_FILE changed but cannot be used: keeping its last good contents');
    expect(JSON.stringify(warnings)).not.toContain('half-writ');
    save(file, JSON.stringify({ S1: { clientSecret: 'second-secret-2' } }), 3);
    expect(store.check()).toBe(true);
    expect(store.for('S1')).toEqual({ clientSecret: 'second-secret-2' });
    expect(changes).toBe(1);
    // the redactor follows the file
    expect(redactor.redact('sent second-secret-2 and first-secret-1')).toBe('sent [redacted] and first-secret-1');
  });

  it('reads a file saved with a byte-order mark, as editors on Windows save UTF-8', () => {
    expect(parseCredentials('\uFEFF{"S1":{"clientSecret":"bom-secret-1"}}')).toEqual({ S1: { clientSecret: 'bom-secret-1' } });
  });

  it('refuses a bad file at start-up in one sentence that quotes nothing of it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'creds-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"S1": {"clientSecret": "leaky-secret-9"');
    expect(() => CredentialStore.open(bad, new Redactor())).toThrow(ConfigError);
    expect(() => CredentialStore.open(bad, new Redactor())).toThrow(/^SELLER_CREDENTIALS_FILE=".*bad\.json" is invalid: it is not valid JSON\.$/);
    expect(() => CredentialStore.open(join(dir, 'none.json'), new Redactor())).toThrow(/is invalid: no such file\.$/);
    expect(() => parseCredentials('{"S1": "just-a-string"}')).toThrow('the entry of "S1" is not an object of fields');
  });
});

describe('Redactor', () => {
  it('masks every secret and token, the longest first', () => {
    const r = new Redactor();
    r.setSource('credentials', ['abcd1234', 'abcd1234-longer', 'abcd']);
    r.addToken('tok-xyz-987');
    expect(r.redact('abcd1234-longer / abcd1234 / tok-xyz-987 / xabcd1234x / abcd')).toBe('[redacted] / [redacted] / [redacted] / x[redacted]x / [redacted]');
  });

  it('masks a secret shorter than 8 characters only as a word of its own: a shop number does not eat into other numbers', () => {
    const r = new Redactor();
    r.setSource('credentials', ['1000', 'product']);
    expect(r.redact('salePrice must be a whole number from 1 to 1000000000')).toBe('salePrice must be a whole number from 1 to 1000000000');
    expect(r.redact('products of shop 1000')).toBe('products of shop [redacted]');
  });

  it('masks a secret shorter than 8 characters where it stands as a word, not inside other words', () => {
    const r = new Redactor();
    r.setSource('credentials', ['k9', 'a.b', '']);
    r.addToken('t1');
    expect(r.redact('pin k9 refused (k9); k9x and ak9 kept; a.b and axb; t1: t10')).toBe('pin [redacted] refused ([redacted]); k9x and ak9 kept; [redacted] and axb; [redacted]: t10');
    expect(r.redact('')).toBe('');
  });

  it('takes every string of an entry and numbers of 4 digits or more from the credentials file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'creds-'));
    const file = join(dir, 'c.json');
    save(file, JSON.stringify({ S1: { pin: 4711, region: 'eu', retries: 3, nested: { key: 'zz' } } }), 0);
    const r = new Redactor();
    CredentialStore.open(file, r);
    expect(r.redact('pin 4711, region eu, key zz, 3 tries, row 4712')).toBe('pin [redacted], region [redacted], key [redacted], 3 tries, row 4712');
  });
});
