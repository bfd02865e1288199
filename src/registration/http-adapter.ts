/**
 * The axios adapter the registration client sends through: one `node:http(s)`
 * request on the client's keep-alive agents, the answer's body read as text.
 *
 * axios's own Node adapter does much more per request than this client needs
 * (redirects, proxies, streams, progress events, decompression by default,
 * form data), and a worker sends one request per row: measured on this
 * project's 2-core host (16 requests at a time to a local server, 20,000
 * requests, client CPU only), a request cost about 195 us of CPU through
 * axios's adapter and about 95 us through this one, where a bare
 * `http.request` costs about 50. In a worker process at capacity the
 * registration client made about half of all the memory allocated, and the
 * garbage collector took a fifth of the CPU.
 *
 * It serves the client's own settings (registration/client.ts): no proxy, no
 * redirects, a text body. API_TIMEOUT_MS bounds the whole request, as the
 * limiter assumes (an unanswered send holds its place that long), where
 * axios's adapter bounds the socket's idle time. Errors are AxiosErrors with
 * the socket's code (ECONNREFUSED, ECONNRESET, ...), ECONNABORTED for the
 * timeout, as axios gives them.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { maskUrl } from '../mask-url.js';
import { AxiosError, type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';

/**
 * The most of an answer's body that is read (bytes): 1 MiB. The answers of registration-api.md
 * are a few hundred bytes (a productId, an error and a field), an error page a few KB; 1 MiB
 * is far above any real answer, yet with up to 64 calls in flight per process it holds at most
 * 64 MiB, where a body of 600 MB crashed the worker (a string longer than V8 allows).
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** An answer whose body went over MAX_ANSWER_BYTES: `data` is its first MAX_ANSWER_BYTES, as text. */
export type BoundedResponse = AxiosResponse & { bodyTruncated?: true };

/**
 * The request's URL: a URL with a scheme (or protocol-relative) stands alone (axios's rule);
 * else the path is appended to the base URL's path, the base's query kept and the path's own
 * added after it (`http://h/api?token=X` + `/sellers/S/products` ->
 * `http://h/api/sellers/S/products?token=X`). A base that is no URL is joined as text, for the
 * request to fail as an invalid URL.
 */
export function fullUrl(baseURL: string | undefined, url: string | undefined): string {
  const path = url ?? '';
  if (!baseURL || /^([a-z][a-z\d+\-.]*:)?\/\//i.test(path)) return path;
  if (!path) return baseURL;
  const joined = () => `${baseURL.replace(/\/?\/$/, '')}/${path.replace(/^\/+/, '')}`;
  // a base with no query (the usual case, once per row): joined as text, without parsing it
  if (!/[?#]/.test(baseURL)) return joined();
  let out: URL;
  try {
    out = new URL(baseURL);
  } catch {
    return joined();
  }
  const cut = path.search(/[?#]/);
  const query = cut === -1 || path[cut] !== '?' ? '' : path.slice(cut + 1).split('#')[0]!;
  out.hash = '';
  out.pathname = `${out.pathname.replace(/\/+$/, '')}/${(cut === -1 ? path : path.slice(0, cut)).replace(/^\/+/, '')}`;
  if (query) out.search = out.search.length > 1 ? `${out.search}&${query}` : `?${query}`;
  return out.href;
}

/** `user:password` of a URL as a Basic Authorization value (as axios sends it), undefined without one. */
export function basicAuthOf(target: URL): string | undefined {
  if (!target.username && !target.password) return undefined;
  const decode = (v: string) => {
    try {
      return decodeURIComponent(v);
    } catch {
      return v;
    }
  };
  return `Basic ${Buffer.from(`${decode(target.username)}:${decode(target.password)}`).toString('base64')}`;
}

/** The answer's body as it came, inflated when the server compressed it anyway (this adapter asks for none). */
function bodyStream(res: IncomingMessage): Readable {
  switch (res.headers['content-encoding']) {
    case 'gzip':
    case 'x-gzip':
      return res.pipe(createGunzip());
    case 'deflate':
      return res.pipe(createInflate());
    case 'br':
      return res.pipe(createBrotliDecompress());
    default:
      return res;
  }
}

export const httpAdapter: AxiosAdapter = (config: InternalAxiosRequestConfig) =>
  new Promise<AxiosResponse>((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(fullUrl(config.baseURL, config.url));
    } catch {
      reject(new AxiosError(`Invalid URL: ${maskUrl(fullUrl(config.baseURL, config.url))}`, AxiosError.ERR_INVALID_URL, config));
      return;
    }
    const secure = target.protocol === 'https:';
    if (!secure && target.protocol !== 'http:') {
      reject(new AxiosError(`Unsupported protocol ${target.protocol}`, AxiosError.ERR_BAD_REQUEST, config));
      return;
    }
    const body = typeof config.data === 'string' ? config.data : undefined;
    if (config.data !== undefined && body === undefined) {
      reject(new AxiosError('the registration client sends text bodies only', AxiosError.ERR_BAD_REQUEST, config));
      return;
    }
    const headers = config.headers.toJSON(true) as Record<string, string>;
    // user:password in the URL (REGISTRATION_API_URL or an adapter's url) goes as Basic auth, never in
    // the request line; an Authorization the request carries itself (a seller's bearer token) wins
    const basic = basicAuthOf(target);
    if (basic && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) headers.Authorization = basic;
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));

    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: AxiosError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
    };
    const req = (secure ? https : http).request({
      protocol: target.protocol,
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port,
      path: target.pathname + target.search,
      method: (config.method ?? 'get').toUpperCase(),
      headers,
      agent: secure ? config.httpsAgent : config.httpAgent,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const limit = Math.min(MAX_ANSWER_BYTES, config.maxContentLength !== undefined && config.maxContentLength > -1 ? config.maxContentLength : Infinity);
      const answer = (truncated: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        const data = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
        const response: BoundedResponse = { data, status, statusText: res.statusMessage ?? '', headers: res.headers, config, request: req, ...(truncated ? { bodyTruncated: true } : {}) };
        if (!config.validateStatus || config.validateStatus(status)) resolve(response);
        else reject(new AxiosError(`Request failed with status code ${status}`, status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST, config, req, response));
      };
      const stream = bodyStream(res);
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (size + chunk.length > limit) {
          // the answer is decided by its status and the first `limit` bytes; the rest is not
          // read: the connection is closed (a body of hundreds of MB crashed the worker)
          chunks.push(chunk.subarray(0, limit - size));
          size = limit;
          answer(true);
          req.destroy();
          return;
        }
        size += chunk.length;
        chunks.push(chunk);
      });
      const broken = (err: NodeJS.ErrnoException) => fail(AxiosError.from(err, err.code ?? AxiosError.ERR_BAD_RESPONSE, config, req));
      stream.on('error', broken);
      if (stream !== res) res.on('error', broken);
      // the connection closed before the whole answer came (an inflating stream would wait for ever)
      res.on('close', () => {
        if (!res.complete) fail(new AxiosError('the connection closed before the answer ended', 'ECONNRESET', config, req));
      });
      stream.on('end', () => answer(false));
    });
    req.on('error', (err: NodeJS.ErrnoException) => fail(AxiosError.from(err, err.code, config, req)));
    if (config.timeout) {
      timer = setTimeout(() => {
        fail(new AxiosError(`timeout of ${config.timeout}ms exceeded`, AxiosError.ECONNABORTED, config, req));
        req.destroy();
      }, config.timeout);
    }
    req.end(body);
  });
