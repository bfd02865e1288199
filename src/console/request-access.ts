/**
 * A console request's access (console.md, "Access"): who is asking, from the
 * Authorization header, a seller link's token, the operator's cookie or open
 * local access, and what that lets it see and change. The checks themselves
 * are in access.ts.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { SELLER_ID } from '../keys.js';
import { ApiError, invalidSeller, LINK_EXPIRED, LINK_INVALID, LINKS_OFF } from './api-error.js';
import { hostNameOf, isLoopbackHost, operatorSession, sameSecret, verifySellerToken, writeAllowed } from './access.js';
import type { Scope } from './views.js';

export const OPS_COOKIE = 'br_ops';

export interface Granted {
  scope: Scope;
  /** The token came in the Authorization header (a script, not a page: no origin check). */
  tokenInHeader: boolean;
  /** When a seller link stops working (ms since the epoch). */
  expiresAt?: number;
}

/** A request's access, or the status and sentence that refuse it. */
export type AccessResult = ({ ok: true } & Granted) | { ok: false; status: 401 | 403; error: string };

export interface RequestAccess {
  /** No operator token, and the console listens on a loopback address: this machine's requests are the operator's. */
  readonly openLocal: boolean;
  /** A seller link's token. */
  sellerAccess(token: string): AccessResult;
  /** Bearer (operator token or seller token), a seller token in the query, the operator cookie, or open local access. */
  accessOf(c: Context): AccessResult;
  /** accessOf, or an ApiError. */
  requireAccess(c: Context): Granted;
  /** A write (upload, cancel, pause, resume) with the scope's rights and from the console's own pages. */
  requireWrite(c: Context, what: string): Scope;
  /** An operator's write. */
  requireOperator(c: Context): void;
  /** An operator may narrow to one seller; a seller sees only itself. */
  scopeWith(scope: Scope, seller: string | undefined): Scope;
}

export function requestAccess(opts: { operatorToken: string; secret: string; host: string }, now: () => number): RequestAccess {
  const openLocal = opts.operatorToken === '' && isLoopbackHost(opts.host);

  const sellerAccess = (token: string): AccessResult => {
    if (opts.secret === '') return { ok: false, status: 403, error: LINKS_OFF };
    const check = verifySellerToken(opts.secret, token, now());
    if (!check.ok) {
      return { ok: false, status: 403, error: check.reason === 'expired' ? LINK_EXPIRED : LINK_INVALID };
    }
    return { ok: true, scope: { kind: 'seller', sellerId: check.sellerId }, tokenInHeader: false, expiresAt: check.expiresAt };
  };

  const accessOf = (c: Context): AccessResult => {
    const auth = c.req.header('authorization');
    if (auth !== undefined) {
      const m = /^Bearer\s+(\S+)$/i.exec(auth.trim());
      if (!m) return { ok: false, status: 401, error: 'the Authorization header must be "Bearer <token>".' };
      const token = m[1]!;
      if (opts.operatorToken !== '' && sameSecret(token, opts.operatorToken)) return { ok: true, scope: { kind: 'operator' }, tokenInHeader: true };
      if (token.includes('.')) {
        const seller = sellerAccess(token);
        return seller.ok ? { ...seller, tokenInHeader: true } : seller;
      }
      return { ok: false, status: 403, error: 'the token is not valid for this console.' };
    }
    const queryToken = c.req.query('token');
    if (queryToken !== undefined) return sellerAccess(queryToken);
    const cookie = getCookie(c, OPS_COOKIE);
    if (cookie !== undefined && opts.operatorToken !== '') {
      if (sameSecret(cookie, operatorSession(opts.operatorToken))) return { ok: true, scope: { kind: 'operator' }, tokenInHeader: false };
    }
    // open access is for this machine only: a page elsewhere whose name was made to point here
    // (DNS rebinding) sends its own name as Host, and gets nothing
    if (openLocal) {
      if (isLoopbackHost(hostNameOf(c.req.header('host')))) return { ok: true, scope: { kind: 'operator' }, tokenInHeader: false };
      return { ok: false, status: 403, error: 'this console has no operator token and answers only at a loopback address (127.0.0.1, localhost or [::1]): open it there, or set CONSOLE_OPERATOR_TOKEN.' };
    }
    return { ok: false, status: 401, error: 'sign in: send "Authorization: Bearer <token>", or open /ops?token=<token> (operators) or your seller link.' };
  };

  const requireAccess = (c: Context): Granted => {
    const a = accessOf(c);
    if (!a.ok) throw new ApiError(a.status, a.error);
    return a;
  };

  const requireWrite = (c: Context, what: string): Scope => {
    const { scope, tokenInHeader } = requireAccess(c);
    const headers = { origin: c.req.header('origin'), host: c.req.header('host'), secFetchSite: c.req.header('sec-fetch-site') };
    if (!writeAllowed(headers, tokenInHeader || openLocal)) throw new ApiError(403, `${what} accepted only from the console's own pages (or with a token in the Authorization header).`);
    return scope;
  };

  const requireOperator = (c: Context): void => {
    if (requireWrite(c, 'changes are').kind !== 'operator') throw new ApiError(403, 'only an operator may pause or resume sellers.');
  };

  const scopeWith = (scope: Scope, seller: string | undefined): Scope => {
    if (scope.kind === 'seller' || seller === undefined || seller === '') return scope;
    if (!SELLER_ID.test(seller)) throw new ApiError(400, invalidSeller(seller));
    return { kind: 'operator', sellerId: seller };
  };

  return { openLocal, sellerAccess, accessOf, requireAccess, requireWrite, requireOperator, scopeWith };
}
