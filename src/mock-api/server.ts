/**
 * The registration API of registration-api.md, for demos, tests and the bench:
 * the sliding rule by arrival time (429 + Retry-After), idempotent replays,
 * validation, SKU duplicates, and latency / failure injection.
 *
 * Test endpoints: GET /_stats (counts per seller, and `?times=1` the arrival
 * times of registrations), POST /_reset, PUT /_limits/{sellerId} {max, windowMs},
 * PUT /_outage {on}: while on, every registration answers 503 (an outage).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { LocalServer, onBody } from './local-server.js';
import type { Logger } from '../logger.js';
import { SELLER_ID } from '../keys.js';
import { SlidingLog } from './sliding-log.js';
import { ConfigError } from '../config.js';

export interface MockApiOptions {
  limit: number;
  windowMs: number;
  /** Added before answering, uniformly in [min, max] ms. */
  latencyMs?: { min: number; max: number };
  /**
   * The network path to the API, uniformly in [min, max] ms: a request is handled,
   * and timed for the rule, only this long after it is in, as a real API behind a
   * network and a gateway times it.
   */
  pathLatencyMs?: { min: number; max: number };
  /** Probability of a 503 before anything is registered. */
  failRate?: number;
  /** Probability of dropping the connection after registering (lost response). */
  dropRate?: number;
  /** Probability of never answering after registering (the client times out). */
  hangRate?: number;
  /** Category codes the marketplace does not have: 422. */
  invalidCategories?: string[];
  /** Category codes the API answers 503 for, every time (a row that keeps failing while the others go through). */
  failCategories?: string[];
  /** Per-seller rule overrides. */
  limits?: Record<string, { max: number; windowMs: number }>;
  log?: Logger;
  random?: () => number;
  now?: () => number;
}

export interface SellerStats {
  requests: number;
  registered: number;
  replays: number;
  duplicates: number;
  invalid: number;
  tooMany: number;
  failures: number;
  /** most registrations admitted in any trailing window */
  maxInWindow: number;
  /** most registration requests that arrived (admitted or refused with 429) in any trailing window */
  maxArrivalsInWindow: number;
}

interface StoredResult {
  status: 201 | 409 | 422;
  body: Record<string, unknown>;
}

const emptyStats = (): SellerStats => ({ requests: 0, registered: 0, replays: 0, duplicates: 0, invalid: 0, tooMany: 0, failures: 0, maxInWindow: 0, maxArrivalsInWindow: 0 });

/** The category of a registration's JSON body ('' when unreadable). */
function categoryOf(raw: string): string {
  try {
    return String((JSON.parse(raw) as { category?: unknown }).category ?? '');
  } catch {
    return '';
  }
}

export function parseLatency(spec: string | undefined, name = 'MOCK_LATENCY_MS'): { min: number; max: number } | undefined {
  if (!spec) return undefined;
  const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(spec);
  if (!m) throw new ConfigError(`${name}=${JSON.stringify(spec)} is invalid: expected ms such as 20 or a range such as 2-25.`);
  const min = Number(m[1]);
  return { min, max: m[2] ? Math.max(min, Number(m[2])) : min };
}

export function parseLimits(spec: string | undefined): Record<string, { max: number; windowMs: number }> {
  const out: Record<string, { max: number; windowMs: number }> = {};
  for (const part of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9_-]{1,64})=(\d+)\/(\d+)$/.exec(part);
    if (!m) throw new ConfigError(`MOCK_LIMITS entry ${JSON.stringify(part)} is invalid: expected seller=max/windowMs such as S1=500/60000.`);
    out[m[1]!] = { max: Number(m[2]), windowMs: Number(m[3]) };
  }
  return out;
}

function validate(body: Record<string, unknown>, invalidCategories: Set<string>): { error: string; field: string } | undefined {
  const text = (f: string, min: number, max: number) => {
    const v = body[f];
    if (v === undefined && min === 0) return undefined;
    if (typeof v !== 'string' || [...v].length < min || [...v].length > max) return { error: `${f} must be text of ${min}-${max} characters`, field: f };
    return undefined;
  };
  const whole = (f: string, min: number, max: number) => {
    const v = body[f];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) return { error: `${f} must be a whole number from ${min} to ${max}`, field: f };
    return undefined;
  };
  const problem =
    text('sku', 1, 50) ?? text('name', 1, 100) ?? whole('price', 1, 1_000_000_000) ?? whole('stock', 0, 99_999) ??
    text('category', 1, 20) ?? text('brand', 0, 50) ?? text('description', 0, 5000);
  if (problem) return problem;
  if (body.imageUrl !== undefined && (typeof body.imageUrl !== 'string' || !/^https?:\/\/\S+$/.test(body.imageUrl))) {
    return { error: 'imageUrl must be an http or https URL', field: 'imageUrl' };
  }
  if (invalidCategories.has(String(body.category))) return { error: `category ${String(body.category)} does not exist`, field: 'category' };
  return undefined;
}

export class MockRegistrationApi {
  private readonly listener = new LocalServer();
  private readonly logs = new Map<string, SlidingLog>();
  /** every non-replay arrival, admitted or not: what the API saw */
  private readonly arrivals = new Map<string, SlidingLog>();
  private readonly stats = new Map<string, SellerStats>();
  private readonly byKey = new Map<string, StoredResult>();
  private readonly bySku = new Map<string, string>();
  private readonly times = new Map<string, number[]>();
  /**
   * When each registration's answer was written (its arrival time plus the latency): its 201,
   * or, when the caller had hung up before that (its timeout), the first replay's 200
   */
  private readonly answered = new Map<string, number[]>();
  /** registrations (by seller and key) whose answer no caller has received yet */
  private readonly unanswered = new Set<string>();
  /** While true, every registration answers 503 (setOutage); the arrival times of those calls. */
  private down = false;
  readonly outageCalls: number[] = [];
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly invalidCategories: Set<string>;
  readonly limits: Record<string, { max: number; windowMs: number }>;

  constructor(private readonly opts: MockApiOptions) {
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    this.invalidCategories = new Set(opts.invalidCategories ?? []);
    this.limits = { ...(opts.limits ?? {}) };
  }

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return this.listener.listen((req, res) => this.handle(req, res), port, host);
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  /** The idempotency keys registered (201), of one seller or of all: what a check of each row's end compares with. */
  registeredKeys(seller?: string): Set<string> {
    const keys = new Set<string>();
    for (const [storeKey, result] of this.byKey) {
      const at = storeKey.indexOf('\n');
      if (result.status === 201 && (seller === undefined || storeKey.slice(0, at) === seller)) keys.add(storeKey.slice(at + 1));
    }
    return keys;
  }

  /** One seller's figures (cheap: for polling many sellers while requests flow). */
  sellerStats(seller: string): (SellerStats & { times: number[]; answered: number[] }) | undefined {
    const s = this.stats.get(seller);
    if (!s) return undefined;
    return {
      ...s,
      maxInWindow: this.logs.get(seller)?.maxInWindow ?? 0,
      maxArrivalsInWindow: this.arrivals.get(seller)?.maxInWindow ?? 0,
      times: this.times.get(seller) ?? [],
      answered: this.answered.get(seller) ?? [],
    };
  }

  statsSnapshot(withTimes = false) {
    const sellers: Record<string, SellerStats & { times?: number[] }> = {};
    const totals = emptyStats();
    for (const seller of this.stats.keys()) {
      const { times, answered: _answered, ...s } = this.sellerStats(seller)!;
      sellers[seller] = withTimes ? { ...s, times } : s;
      for (const k of Object.keys(totals) as Array<keyof SellerStats>) {
        totals[k] = k === 'maxInWindow' || k === 'maxArrivalsInWindow' ? Math.max(totals[k], s[k]) : totals[k] + s[k];
      }
    }
    return { totals, sellers };
  }

  reset(): void {
    this.logs.clear();
    this.arrivals.clear();
    this.stats.clear();
    this.byKey.clear();
    this.bySku.clear();
    this.times.clear();
    this.answered.clear();
    this.unanswered.clear();
  }

  private rule(seller: string) {
    const o = this.limits[seller];
    return o ? { limit: o.max, windowMs: o.windowMs } : { limit: this.opts.limit, windowMs: this.opts.windowMs };
  }

  private delayOf(latency: { min: number; max: number } | undefined): number {
    return latency ? latency.min + Math.floor(this.random() * (latency.max - latency.min + 1)) : 0;
  }

  private send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, onWritten?: () => void): void {
    const delay = this.delayOf(this.opts.latencyMs);
    const write = () => {
      if (res.destroyed) return;
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
      onWritten?.();
    };
    if (delay > 0) setTimeout(write, delay);
    else write();
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://mock');
    onBody(req, (raw) => {
      const path = this.delayOf(this.opts.pathLatencyMs);
      if (path > 0) setTimeout(() => this.handleArrived(req, res, url, raw), path);
      else this.handleArrived(req, res, url, raw);
    });
  }

  private handleArrived(req: http.IncomingMessage, res: http.ServerResponse, url: URL, raw: string): void {
    // Timed at arrival: the moment the whole request is in (after the path's latency).
    const arrivedAt = this.now();
    if (req.method === 'GET' && url.pathname === '/_stats') return this.send(res, 200, this.statsSnapshot(url.searchParams.get('times') === '1'));
    if (req.method === 'GET' && url.pathname === '/healthz') return this.send(res, 200, { ok: true });
    if (req.method === 'PUT' && url.pathname === '/_outage') {
      let on = false;
      try {
        on = (JSON.parse(raw) as { on?: unknown }).on === true;
      } catch {
        return this.send(res, 400, { error: 'send {"on": true} or {"on": false}' });
      }
      this.setOutage(on);
      return this.send(res, 200, { ok: true, on, outageCalls: this.outageCalls.length });
    }
    if (req.method === 'POST' && url.pathname === '/_reset') {
      this.reset();
      return this.send(res, 200, { ok: true });
    }
    const limitMatch = /^\/_limits\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'PUT' && limitMatch) {
      try {
        const b = JSON.parse(raw) as { max?: number; windowMs?: number };
        this.limits[decodeURIComponent(limitMatch[1]!)] = { max: Number(b.max), windowMs: Number(b.windowMs ?? this.opts.windowMs) };
        return this.send(res, 200, { ok: true });
      } catch {
        return this.send(res, 400, { error: 'body must be JSON {max, windowMs}' });
      }
    }
    if (req.method === 'DELETE' && limitMatch) {
      delete this.limits[decodeURIComponent(limitMatch[1]!)];
      return this.send(res, 200, { ok: true });
    }
    const m = /^\/sellers\/([^/]+)\/products$/.exec(url.pathname);
    if (!m) return this.send(res, 404, { error: 'not found' });
    if (req.method !== 'POST') return this.send(res, 405, { error: 'method not allowed' });
    this.register(decodeURIComponent(m[1]!), req, res, raw, arrivedAt);
  }

  /** An outage: from now on, until called with false, every registration answers 503 before anything else. */
  setOutage(on: boolean): void {
    this.down = on;
  }

  private register(seller: string, req: http.IncomingMessage, res: http.ServerResponse, raw: string, arrivedAt: number): void {
    if (!SELLER_ID.test(seller)) return this.send(res, 400, { error: 'sellerId must be 1-64 characters of A-Z a-z 0-9 _ -', field: 'sellerId' });
    if (this.down) {
      this.outageCalls.push(arrivedAt);
      return this.send(res, 503, { error: 'service unavailable (outage)' });
    }
    const stats = this.stats.get(seller) ?? emptyStats();
    this.stats.set(seller, stats);
    stats.requests++;
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
      stats.invalid++;
      return this.send(res, 400, { error: 'Idempotency-Key header is required (at most 255 characters)', field: 'Idempotency-Key' });
    }
    const storeKey = `${seller}\n${key}`;
    const previous = this.byKey.get(storeKey);
    if (previous) {
      if (previous.status === 201) {
        stats.replays++;
        return this.send(res, 200, previous.body, {}, () => this.noteAnswered(seller, storeKey));
      }
      return this.send(res, previous.status, previous.body);
    }

    const { limit, windowMs } = this.rule(seller);
    let log = this.logs.get(seller);
    if (!log) this.logs.set(seller, (log = new SlidingLog()));
    let seen = this.arrivals.get(seller);
    if (!seen) this.arrivals.set(seller, (seen = new SlidingLog()));
    seen.tryAdmit(arrivedAt, Number.MAX_SAFE_INTEGER, windowMs);
    const admitted = log.tryAdmit(arrivedAt, limit, windowMs);
    if (!admitted.admitted) {
      stats.tooMany++;
      this.opts.log?.warn({ sellerId: seller, key }, 'mock API: 429, the seller is over the rate rule');
      return this.send(res, 429, { error: `at most ${limit} registrations per ${windowMs} ms` }, { 'Retry-After': String(Math.ceil(admitted.retryAfterMs / 1000)) });
    }
    if (this.opts.failCategories?.length && this.opts.failCategories.includes(categoryOf(raw))) {
      stats.failures++;
      return this.send(res, 503, { error: 'service unavailable (injected)' });
    }
    if (this.opts.failRate && this.random() < this.opts.failRate) {
      stats.failures++;
      return this.send(res, 503, { error: 'service unavailable (injected)' });
    }

    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
    } catch {
      stats.invalid++;
      return this.send(res, 400, { error: 'the body must be one JSON product' });
    }
    const problem = validate(body, this.invalidCategories);
    let result: StoredResult;
    if (problem) {
      stats.invalid++;
      result = { status: 422, body: problem };
    } else {
      const skuKey = `${seller}\n${String(body.sku)}`;
      const existing = this.bySku.get(skuKey);
      if (existing) {
        stats.duplicates++;
        result = { status: 409, body: { error: `the seller already has SKU ${String(body.sku)}`, productId: existing } };
      } else {
        const productId = `P${randomUUID().replace(/-/g, '').slice(0, 16)}`;
        this.bySku.set(skuKey, productId);
        stats.registered++;
        const t = this.times.get(seller) ?? [];
        t.push(arrivedAt);
        this.times.set(seller, t);
        result = { status: 201, body: { productId } };
      }
    }
    this.byKey.set(storeKey, result);
    if (result.status === 201) this.unanswered.add(storeKey);

    if (result.status === 201 && this.opts.dropRate && this.random() < this.opts.dropRate) {
      stats.failures++;
      req.socket.destroy();
      return;
    }
    if (result.status === 201 && this.opts.hangRate && this.random() < this.opts.hangRate) {
      stats.failures++;
      return;
    }
    this.send(res, result.status, result.body, {}, result.status === 201 ? () => this.noteAnswered(seller, storeKey) : undefined);
  }

  private noteAnswered(seller: string, storeKey: string): void {
    if (!this.unanswered.delete(storeKey)) return;
    const a = this.answered.get(seller) ?? [];
    a.push(this.now());
    this.answered.set(seller, a);
  }
}
