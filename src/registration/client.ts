/**
 * The HTTP side of a row's call: the adapter turns the row into a request, this
 * client sends it (keep-alive connections, API_TIMEOUT_MS, `Idempotency-Key:
 * {uploadId}:{row}` unless the adapter set its own), and the adapter turns the
 * answer into an outcome. Never throws: a call with no answer is transient, an
 * adapter that throws or returns nonsense is a `fault` naming the adapter.
 * Every reason passes through the redactor: no secret leaves in a message.
 */
import http from 'node:http';
import https from 'node:https';
import axios, { type AxiosInstance } from 'axios';
import { AdapterFault, checkOutcome, checkRequest, checkTokenOutcome, type AdapterAnswer, type AdapterCall, type AdapterRequest, type TokenContext, type TokenOutcome } from './adapter.js';
import { httpAdapter, type BoundedResponse } from './http-adapter.js';
import { parseJsonBody } from './json-body.js';
import type { LoadedAdapter } from './load-adapter.js';
import { outcomeOfError, type ApiOutcome } from './outcome.js';
import type { Redactor } from './redactor.js';

export interface RegistrationClient {
  register(call: AdapterCall): Promise<ApiOutcome>;
  /** The adapter's token request (only when it has one). */
  requestToken(ctx: TokenContext): Promise<TokenOutcome | { kind: 'fault'; reason: string }>;
  readonly adapter: LoadedAdapter;
  close(): void;
}

function headersOf(raw: unknown): Record<string, string> {
  const plain = raw && typeof (raw as { toJSON?: unknown }).toJSON === 'function' ? (raw as { toJSON(): Record<string, unknown> }).toJSON() : (raw as Record<string, unknown>) ?? {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(plain)) if (v !== undefined && v !== null) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

function bodyOf(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  const t = data.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return parseJsonBody(data);
    } catch {
      return data;
    }
  }
  return data;
}

/**
 * Errors Node raises while building a request, before anything is sent: the request itself
 * is wrong (a path with spaces, a header checkRequest let through), not the API away.
 */
const UNSENDABLE = new Set(['ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN', 'ERR_HTTP_INVALID_HEADER_VALUE', 'ERR_UNESCAPED_CHARACTERS', 'ERR_INVALID_URL', 'ERR_INVALID_PROTOCOL', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE']);
function unsendable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  const cause = (err as { cause?: { code?: unknown } })?.cause?.code;
  return UNSENDABLE.has(String(code)) || UNSENDABLE.has(String(cause));
}

/** Rejects after `ms` when `p` has not settled (an adapter's promise that never ends must not hold a slot forever). */
function within<T>(p: T | Promise<T>, ms: number, what: string): Promise<T> {
  if (!(p instanceof Promise)) return Promise.resolve(p);
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new AdapterFault(`${what} did not return within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export function createRegistrationClient(opts: {
  baseUrl: string;
  timeoutMs: number;
  adapter: LoadedAdapter;
  redactor: Redactor;
}): RegistrationClient {
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  const { adapter: loaded, redactor } = opts;
  const adapter = loaded.adapter;
  const client: AxiosInstance = axios.create({
    baseURL: opts.baseUrl,
    timeout: opts.timeoutMs,
    httpAgent,
    httpsAgent,
    validateStatus: () => true,
    // the body is sent as the adapter's string or our JSON (send() below), the answer read as text
    transformRequest: [(data: unknown) => data],
    transformResponse: [(data: unknown) => data],
    responseType: 'text',
    adapter: httpAdapter,
  });
  // send() sets every header a request carries: axios's defaults (per method, merged into each
  // request's config) would only be copied and dropped again at every row
  client.defaults.headers = {} as typeof client.defaults.headers;
  const fault = (what: string, err: unknown): { kind: 'fault'; reason: string } => {
    const message = err instanceof Error ? err.message : String(err);
    const shown = err instanceof AdapterFault ? message : `${what} threw: ${message.split('\n')[0]}`;
    return { kind: 'fault', reason: redactor.redact(`${loaded.name}: ${shown}`).slice(0, 500) };
  };

  /**
   * Sends a request. A transient outcome: no answer came (its reason says why); a fault: the
   * adapter's request cannot be sent at all (a body JSON cannot hold, a URL or path HTTP refuses),
   * which says nothing of the API and is not retried.
   */
  async function send(req: AdapterRequest, what: string, idempotencyKey?: string): Promise<AdapterAnswer | { kind: 'transient' | 'fault'; reason: string }> {
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'bulk-register', ...req.headers };
    const names = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
    if (idempotencyKey !== undefined && !names.has('idempotency-key')) headers['Idempotency-Key'] = idempotencyKey;
    let data: unknown = req.body;
    if (data !== undefined && typeof data !== 'string') {
      try {
        data = JSON.stringify(data);
      } catch (err) {
        return fault(what, new AdapterFault(`${what} returned a body that cannot be sent as JSON (${(err as Error).message.split('\n')[0]})`));
      }
      if (!names.has('content-type')) headers['Content-Type'] = 'application/json';
    }
    try {
      const res: BoundedResponse = await client.request({ method: req.method, url: req.url ?? req.path, headers, data });
      if (res.bodyTruncated) return { status: res.status, headers: headersOf(res.headers), body: res.data, bodyTruncated: true };
      return { status: res.status, headers: headersOf(res.headers), body: bodyOf(res.data) };
    } catch (err) {
      if (unsendable(err)) return fault(what, new AdapterFault(`${what} returned a request that cannot be sent (${(err as Error).message.split('\n')[0]})`));
      return outcomeOfError(err, opts.timeoutMs);
    }
  }

  return {
    adapter: loaded,
    async register(call) {
      let req: AdapterRequest;
      try {
        req = checkRequest(await within(adapter.request(call), opts.timeoutMs, 'request()'), 'request()');
      } catch (err) {
        return fault('request()', err);
      }
      const answer = await send(req, 'request()', call.idempotencyKey);
      if ('kind' in answer) return answer;
      try {
        const outcome: ApiOutcome = checkOutcome(await within(adapter.outcome(answer), opts.timeoutMs, 'outcome()'));
        // only a 5xx is no usable answer (cli.md, API outages): any other status the adapter finds
        // transient is retried, but the API answered it and it counts toward no outage
        const answered = outcome.kind === 'transient' && answer.status < 500 ? { answered: true as const } : {};
        // the field is shown with the reason (a row's "field: reason"): both are the marketplace's words
        if (!('reason' in outcome)) return outcome;
        return { ...outcome, ...answered, reason: redactor.redact(outcome.reason), ...('field' in outcome && outcome.field !== undefined ? { field: redactor.redact(outcome.field) } : {}) };
      } catch (err) {
        return fault('outcome()', err);
      }
    },
    async requestToken(ctx) {
      if (!adapter.tokenRequest || !adapter.tokenOutcome) return { kind: 'fault', reason: `${loaded.name} has no tokenRequest` };
      let req: AdapterRequest;
      try {
        req = checkRequest(await within(adapter.tokenRequest(ctx), opts.timeoutMs, 'tokenRequest()'), 'tokenRequest()');
      } catch (err) {
        return fault('tokenRequest()', err);
      }
      const answer = await send(req, 'tokenRequest()');
      if ('kind' in answer) return answer.kind === 'fault' ? { kind: 'fault', reason: answer.reason } : { kind: 'transient', reason: `token request: ${answer.reason}` };
      try {
        const out = checkTokenOutcome(await within(adapter.tokenOutcome(answer), opts.timeoutMs, 'tokenOutcome()'));
        if ('token' in out) {
          redactor.addToken(out.token);
          return out;
        }
        return 'reason' in out ? { ...out, reason: redactor.redact(out.reason) } : out;
      } catch (err) {
        return fault('tokenOutcome()', err);
      }
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
