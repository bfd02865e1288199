/**
 * Who may see what in the console (console.md, "Access"). Pure: secrets, tokens
 * and clocks come in as arguments.
 *
 * - A seller link carries `<sellerId>.<expiry in s>.<HMAC-SHA256 of both>`,
 *   signed with CONSOLE_SECRET; it opens that seller's data only, until it expires.
 * - The operator token (CONSOLE_OPERATOR_TOKEN) is sent as a Bearer header, or
 *   traded once for a cookie holding a value derived from it (never the token).
 * Every comparison of a secret-derived value is made in constant time.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SELLER_ID } from '../keys.js';

export type Access =
  | { kind: 'operator' }
  | { kind: 'seller'; sellerId: string; expiresAt: number };

export type SellerTokenCheck =
  | { ok: true; sellerId: string; expiresAt: number }
  | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

const b64url = (buf: Buffer) => buf.toString('base64url');

function sellerSignature(secret: string, sellerId: string, expiresAtS: number): Buffer {
  return createHmac('sha256', secret).update(`bulk-register seller link\n${sellerId}\n${expiresAtS}`).digest();
}

/** @param expiresAtMs when the link stops working (ms since the epoch; kept to the second) */
export function signSellerToken(secret: string, sellerId: string, expiresAtMs: number): string {
  if (!SELLER_ID.test(sellerId)) throw new Error(`seller id ${JSON.stringify(sellerId)} is invalid`);
  const expiresAtS = Math.floor(expiresAtMs / 1000);
  return `${sellerId}.${expiresAtS}.${b64url(sellerSignature(secret, sellerId, expiresAtS))}`;
}

export function verifySellerToken(secret: string, token: string, nowMs: number): SellerTokenCheck {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed' };
  const [sellerId, expiry, signature] = parts as [string, string, string];
  if (!SELLER_ID.test(sellerId) || !/^\d{1,12}$/.test(expiry) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return { ok: false, reason: 'malformed' };
  // compared as text, not as decoded bytes: decoding ignores the low bits of the last
  // character, so several spellings decode to the same signature, and only the one we wrote may pass
  const expected = Buffer.from(b64url(sellerSignature(secret, sellerId, Number(expiry))));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'signature' };
  const expiresAt = Number(expiry) * 1000;
  if (expiresAt <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, sellerId, expiresAt };
}

/** Equal in constant time (for the two values' digests, so length does not leak either). */
export function sameSecret(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

/** The operator cookie's value: derived from the token, so the cookie never holds the token itself. */
export function operatorSession(operatorToken: string): string {
  return b64url(createHmac('sha256', operatorToken).update('bulk-register operator session').digest());
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const MAX_LINK_TTL_MS = 366 * 86_400_000;

/** `90s`, `30m`, `12h`, `7d` -> ms; undefined for anything else or past a year. */
export function parseTtl(text: string): number | undefined {
  const m = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * UNITS[m[2]!]!;
  return ms > 0 && ms <= MAX_LINK_TTL_MS ? ms : undefined;
}

/** Whether an address to bind is reachable only from this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The Host header's name (no port, no brackets), lower case; '' when there is none or it cannot be read. */
export function hostNameOf(host: string | undefined): string {
  if (!host) return '';
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return '';
  }
}

/**
 * Whether a write comes from a page of this console: the browser's Origin names
 * this host, and Fetch Metadata (when sent) does not say cross-site. A request
 * with no Origin is a script's (curl), allowed only with a token in a header.
 */
export function writeAllowed(headers: { origin?: string | undefined; host?: string | undefined; secFetchSite?: string | undefined }, tokenInHeader: boolean): boolean {
  if (headers.secFetchSite && headers.secFetchSite !== 'same-origin' && headers.secFetchSite !== 'none') return false;
  if (!headers.origin) return tokenInHeader;
  try {
    return new URL(headers.origin).host === headers.host;
  } catch {
    return false;
  }
}
