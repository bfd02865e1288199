import { describe, expect, it } from 'vitest';
import { isLoopbackHost, operatorSession, parseTtl, sameSecret, signSellerToken, verifySellerToken, writeAllowed } from '../../src/console/access.js';

const SECRET = 'k'.repeat(32);
const NOW = 1_800_000_000_000;

describe('seller links', () => {
  const token = signSellerToken(SECRET, 'S-1', NOW + 60_000);

  it('verify what was signed, until it expires', () => {
    expect(verifySellerToken(SECRET, token, NOW)).toEqual({ ok: true, sellerId: 'S-1', expiresAt: NOW + 60_000 });
    expect(verifySellerToken(SECRET, token, NOW + 59_999)).toMatchObject({ ok: true });
    expect(verifySellerToken(SECRET, token, NOW + 60_000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuse a token changed anywhere, or signed with another secret', () => {
    const [seller, expiry, sig] = token.split('.') as [string, string, string];
    expect(verifySellerToken(SECRET, `S-2.${expiry}.${sig}`, NOW)).toEqual({ ok: false, reason: 'signature' });
    expect(verifySellerToken(SECRET, `${seller}.${Number(expiry) + 3600}.${sig}`, NOW)).toEqual({ ok: false, reason: 'signature' });
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'a' ? 'b' : 'a'}${sig.slice(11)}`;
    expect(verifySellerToken(SECRET, `${seller}.${expiry}.${flipped}`, NOW)).toEqual({ ok: false, reason: 'signature' });
    expect(verifySellerToken('another-secret', token, NOW)).toEqual({ ok: false, reason: 'signature' });
  });

  it('refuse a signature spelled any other way than it was signed, even one that decodes to the same bytes', () => {
    const [seller, expiry, sig] = token.split('.') as [string, string, string];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (const last of alphabet.replace(sig.at(-1)!, '')) {
      expect(verifySellerToken(SECRET, `${seller}.${expiry}.${sig.slice(0, -1)}${last}`, NOW), last).toEqual({ ok: false, reason: 'signature' });
    }
  });

  it('refuse malformed tokens without throwing', () => {
    for (const bad of ['', 'x', 'a.b', 'S-1.123.short', `S 1.${NOW}.${'A'.repeat(43)}`, `${token}.extra`, `S-1.-5.${'A'.repeat(43)}`]) {
      expect(verifySellerToken(SECRET, bad, NOW)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('will not sign an invalid seller id', () => {
    expect(() => signSellerToken(SECRET, 'a.b', NOW)).toThrow();
  });
});

describe('operator access', () => {
  it('compares secrets whole, and the cookie value is not the token', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('abc', 'abcd')).toBe(false);
    expect(operatorSession('tok')).not.toContain('tok');
    expect(operatorSession('tok')).toBe(operatorSession('tok'));
    expect(operatorSession('tok')).not.toBe(operatorSession('tok2'));
  });

  it('tells loopback addresses from the rest', () => {
    for (const h of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'console.example.com', '128.0.0.1']) expect(isLoopbackHost(h)).toBe(false);
  });

  it('accepts writes from the same origin, refuses cross-site ones', () => {
    expect(writeAllowed({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080' }, false)).toBe(true);
    expect(writeAllowed({ origin: 'https://evil.example', host: '127.0.0.1:8080' }, false)).toBe(false);
    expect(writeAllowed({ origin: 'https://evil.example', host: '127.0.0.1:8080' }, true)).toBe(false);
    expect(writeAllowed({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080', secFetchSite: 'cross-site' }, false)).toBe(false);
    expect(writeAllowed({ origin: 'null', host: '127.0.0.1:8080' }, false)).toBe(false);
    // no Origin: a script, allowed only with a token in its header
    expect(writeAllowed({ host: '127.0.0.1:8080' }, true)).toBe(true);
    expect(writeAllowed({ host: '127.0.0.1:8080' }, false)).toBe(false);
  });
});

describe('link lifetimes', () => {
  it('reads 90s, 30m, 12h, 7d and refuses the rest', () => {
    expect(parseTtl('90s')).toBe(90_000);
    expect(parseTtl('30m')).toBe(1_800_000);
    expect(parseTtl('12h')).toBe(43_200_000);
    expect(parseTtl('7d')).toBe(604_800_000);
    for (const bad of ['', '7', '1w', '-1d', '0s', '400d', '1.5h']) expect(parseTtl(bad)).toBeUndefined();
  });
});
