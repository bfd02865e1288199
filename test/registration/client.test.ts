import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import type { Adapter, AdapterAnswer, AdapterCall } from '../../src/registration/adapter.js';
import { createRegistrationClient } from '../../src/registration/client.js';
import { MAX_ANSWER_BYTES, fullUrl } from '../../src/registration/http-adapter.js';
import { Redactor } from '../../src/registration/redactor.js';
import { builtinAdapter, builtinOutcome } from '../../src/registration/builtin-adapter.js';
import { FailureStreak, TRIP_AFTER, usableAnswer } from '../../src/steering/outage.js';

interface Seen { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }

const seen: Seen[] = [];
let endlessClosed = false;
let base = '';
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    if (req.url!.endsWith('/gzip')) {
      res.writeHead(201, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ productId: 'zipped' })));
    } else if (/\/sellers\/status-\d+\//.test(req.url!)) {
      // the built-in adapter's call for seller status-NNN: answered NNN
      const status = Number(/status-(\d+)/.exec(req.url!)![1]);
      if (status === 204) res.writeHead(204).end();
      else if (status >= 300 && status < 400) res.writeHead(status, { location: `http://user:pw@127.0.0.1/v2${req.url}?token=abc` }).end();
      else if (status === 202) res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ productId: 'P-1', status: 'pending' }));
      else if (status < 300) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'created' }));
      else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: status === 404 ? 'no such route' : 'nope' }));
    } else if (req.url!.endsWith('/endless')) {
      // a 201 whose body never ends: only a bound on what is read stops it
      res.writeHead(201, { 'content-type': 'application/json' });
      res.write('{"productId":"big","junk":"');
      const junk = 'x'.repeat(64 * 1024);
      const more = () => {
        while (!res.destroyed && res.write(junk));
        if (!res.destroyed) res.once('drain', more);
      };
      res.on('close', () => (endlessClosed = true));
      more();
    } else if (req.url!.endsWith('/sellers/big-id/products')) {
      // a 64-bit id sent as a JSON number, beyond what a JavaScript number holds
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"productId": 1234567890123456789}');
    } else if (req.url!.endsWith('/drop')) {
      req.socket.destroy();
    } else if (req.url!.endsWith('/gzip-drop')) {
      // a compressed answer cut off halfway
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.write(gzipSync(JSON.stringify({ productId: 'cut' })).subarray(0, 8));
      setTimeout(() => req.socket.destroy(), 20);
    } else if (req.url!.endsWith('/dribble')) {
      // an answer that keeps the socket busy but never ends: only a bound on the whole request stops it
      res.writeHead(200, { 'content-type': 'text/plain' });
      const beat = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(beat));
    } else {
      res.writeHead(201, { 'content-type': 'application/json', 'x-trace': 'abc' });
      res.end(JSON.stringify({ productId: 'p-1', echoed: body.length }));
    }
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const call: AdapterCall = {
  sellerId: 'S1', uploadId: 'u1', row: 7, idempotencyKey: 'u1:7',
  product: { sku: 'SKU-7', name: 'Seven', price: 700, stock: 1 } as AdapterCall['product'],
  attributes: {}, credentials: undefined, now: 0,
};

/** A client whose adapter posts to `path` and answers `registered` with what it was given. */
function clientFor(path: string, timeoutMs = 2000, baseUrl = base) {
  const answers: AdapterAnswer[] = [];
  const adapter: Adapter = {
    request: (c) => ({ method: 'POST', path, body: { sku: c.product.sku } }),
    outcome: (answer) => {
      answers.push(answer);
      return { kind: 'registered', productId: String((answer.body as { productId?: string }).productId) };
    },
  } as Adapter;
  const client = createRegistrationClient({ baseUrl, timeoutMs, adapter: { adapter, name: 'a test adapter', builtin: false, tokens: false, announcesRules: false }, redactor: new Redactor() });
  return { client, answers };
}

describe('the registration client', () => {
  it('sends the request under the base URL with the key, JSON body and its length, and hands the adapter the answer', async () => {
    const { client, answers } = clientFor('/products');
    try {
      await expect(client.register(call)).resolves.toEqual({ kind: 'registered', productId: 'p-1' });
      const req = seen.at(-1)!;
      expect(req).toMatchObject({ method: 'POST', url: '/api/products', body: '{"sku":"SKU-7"}' });
      expect(req.headers).toMatchObject({
        'idempotency-key': 'u1:7', 'content-type': 'application/json', 'content-length': '15', accept: 'application/json',
      });
      expect(answers[0]).toMatchObject({ status: 201, body: { productId: 'p-1', echoed: 15 } });
      expect(answers[0]!.headers['x-trace']).toBe('abc');
      // a second row goes down the same keep-alive connection
      await client.register(call);
      expect(seen.at(-1)!.headers.connection).toBe('keep-alive');
    } finally {
      client.close();
    }
  });

  it('reads an answer the server compressed', async () => {
    const { client } = clientFor('/gzip');
    try {
      await expect(client.register(call)).resolves.toEqual({ kind: 'registered', productId: 'zipped' });
    } finally {
      client.close();
    }
  });

  it('reads at most 1 MiB of an answer\'s body and closes the connection on the rest: the status decides', async () => {
    const { client, answers } = clientFor('/endless', 10_000);
    try {
      const started = Date.now();
      await client.register(call);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ status: 201, bodyTruncated: true });
      expect(MAX_ANSWER_BYTES).toBe(1024 * 1024);
      expect((answers[0]!.body as string).length).toBe(MAX_ANSWER_BYTES);
      expect((answers[0]!.body as string).startsWith('{"productId":"big","junk":"xxx')).toBe(true);
      await until('the server sees the connection closed', async () => endlessClosed, 5000);
      // a 201 whose productId was not read: retried with the same key (the replay's 200 gives it), an answer all the same
      expect(builtinOutcome(answers[0]!, 0)).toEqual({ kind: 'transient', reason: 'the API answered 201 Created with a body over 1 MiB, not read: the productId is unknown' });
    } finally {
      client.close();
    }
  });

  it('bounds the whole request by the timeout, even while the answer keeps arriving', async () => {
    const { client } = clientFor('/dribble', 300);
    const started = Date.now();
    try {
      await expect(client.register(call)).resolves.toEqual({ kind: 'transient', reason: 'the API did not answer within 300 ms' });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      client.close();
    }
  });

  it('says the connection was dropped, or refused, as a transient reason', async () => {
    const dropped = clientFor('/drop');
    const cut = clientFor('/gzip-drop', 5000);
    const refused = clientFor('/products', 2000, 'http://127.0.0.1:1/');
    try {
      await expect(dropped.client.register(call)).resolves.toEqual({ kind: 'transient', reason: 'the connection to the API was dropped before it answered' });
      // not left waiting for the rest of the answer until the timeout
      const started = Date.now();
      await expect(cut.client.register(call)).resolves.toEqual({ kind: 'transient', reason: 'the connection to the API was dropped before it answered' });
      expect(Date.now() - started).toBeLessThan(2000);
      await expect(refused.client.register(call)).resolves.toEqual({ kind: 'transient', reason: 'the API refused the connection (is it running?)' });
    } finally {
      dropped.client.close();
      cut.client.close();
      refused.client.close();
    }
  });

  it('fails, naming the adapter, a request that cannot be sent, and sends nothing: it is no sign of the API being away', async () => {
    const requests: Array<[string, Record<string, unknown>]> = [
      ['a header value beyond Latin-1', { method: 'POST', path: '/products', headers: { 'X-Shop-Name': '상점' }, body: {} }],
      ['a line break in a header value', { method: 'POST', path: '/products', headers: { 'X-Note': 'a\r\nX-Injected: 1' }, body: {} }],
      ['a header name with a space', { method: 'POST', path: '/products', headers: { 'X Shop': 'a' }, body: {} }],
      ['a body JSON cannot hold', { method: 'POST', path: '/products', body: { stock: 10n } }],
    ];
    const before = seen.length;
    for (const [what, request] of requests) {
      const adapter = { request: () => request, outcome: () => ({ kind: 'registered', productId: 'x' }) } as unknown as Adapter;
      const client = createRegistrationClient({ baseUrl: base, timeoutMs: 2000, adapter: { adapter, name: 'adapter shop.mjs', builtin: false, tokens: false, announcesRules: false }, redactor: new Redactor() });
      try {
        const outcome = await client.register(call);
        expect(outcome, what).toMatchObject({ kind: 'fault' });
        expect((outcome as { reason: string }).reason, what).toMatch(/^adapter shop\.mjs: request\(\) returned (a header|header "X-|a body that cannot be sent as JSON)/);
      } finally {
        client.close();
      }
    }
    expect(seen.length).toBe(before);
  });

  it('joins paths to the base URL as axios does', () => {
    expect(fullUrl('http://h/api/', '/v1/x')).toBe('http://h/api/v1/x');
    expect(fullUrl('http://h/api', 'v1/x?a=1')).toBe('http://h/api/v1/x?a=1');
    expect(fullUrl('http://h/api', 'https://other/y')).toBe('https://other/y');
    expect(fullUrl('http://h/api', '')).toBe('http://h/api');
  });

  it('appends the path to the base URL\'s path and keeps its query', () => {
    expect(fullUrl('http://h/api?token=X', '/sellers/S/products')).toBe('http://h/api/sellers/S/products?token=X');
    expect(fullUrl('http://h/api/?token=X&v=2', 'v1/x?a=1')).toBe('http://h/api/v1/x?token=X&v=2&a=1');
    expect(fullUrl('http://u:p@h:81?k=1', '/x')).toBe('http://u:p@h:81/x?k=1');
  });

  it('sends user:password of the base URL as Basic auth, not in the request line, and its query after the path', async () => {
    const withCredentials = base.replace('http://', 'http://ops:p%40ss%20w@') + '?token=T1';
    const { client } = clientFor('/products', 2000, withCredentials);
    const bearer = createRegistrationClient({
      baseUrl: withCredentials, timeoutMs: 2000, redactor: new Redactor(),
      adapter: { adapter: builtinAdapter({ registrationToken: 'static-1' }), name: 'the built-in adapter', builtin: true, tokens: false, announcesRules: false },
    });
    try {
      await expect(client.register(call)).resolves.toMatchObject({ kind: 'registered' });
      expect(seen.at(-1)!.url).toBe('/api/products?token=T1');
      expect(seen.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from('ops:p@ss w').toString('base64')}`);
      // a request's own Authorization (the seller's bearer token) is kept
      await bearer.register(call);
      expect(seen.at(-1)!.url).toBe('/api/sellers/S1/products?token=T1');
      expect(seen.at(-1)!.headers.authorization).toBe('Bearer static-1');
    } finally {
      client.close();
      bearer.close();
    }
  });
});

describe('the registration client and secrets', () => {
  it('masks the secrets in an invalid outcome\'s field as in its reason: the row shows "field: reason"', async () => {
    const redactor = new Redactor();
    redactor.setSource('credentials', ['demo-secret-S1']);
    const adapter = {
      request: () => ({ method: 'POST', path: '/products', body: {} }),
      outcome: () => ({ kind: 'invalid', reason: 'bad field demo-secret-S1', field: 'demo-secret-S1' }),
    } as unknown as Adapter;
    const client = createRegistrationClient({ baseUrl: base, timeoutMs: 2000, adapter: { adapter, name: 'a leaky adapter', builtin: false, tokens: false, announcesRules: false }, redactor });
    await expect(client.register(call)).resolves.toEqual({ kind: 'invalid', reason: 'bad field [redacted]', field: '[redacted]' });
  });

  it('registers a productId sent as a number beyond 2^53 with every digit it has', async () => {
    const client = createRegistrationClient({
      baseUrl: base, timeoutMs: 2000, redactor: new Redactor(),
      adapter: { adapter: builtinAdapter({ apiUrl: base }), name: 'the built-in adapter', builtin: true, tokens: false, announcesRules: false },
    });
    try {
      // JSON.parse alone reads 1234567890123456800: another product's id
      expect(await client.register({ ...call, sellerId: 'big-id' })).toEqual({ kind: 'registered', productId: '1234567890123456789' });
    } finally {
      client.close();
    }
  });

  it('takes an unexpected status as an answer: a 3xx or 4xx fails the row naming it, a 2xx without a productId is retried, and neither counts toward an outage', async () => {
    const apiUrl = base.replace('http://', 'http://ops:hunter2@') + '?token=T0K';
    const client = createRegistrationClient({
      baseUrl: base, timeoutMs: 2000, redactor: new Redactor(),
      adapter: { adapter: builtinAdapter({ apiUrl }), name: 'the built-in adapter', builtin: true, tokens: false, announcesRules: false },
    });
    const callFor = async (status: number) => client.register({ ...call, sellerId: `status-${status}` });
    try {
      const notFound = await callFor(404);
      expect(notFound).toMatchObject({ kind: 'invalid' });
      expect((notFound as { reason: string }).reason).toBe(
        `the API answered 404 Not Found: no such route: no product was created; the address may be wrong: check REGISTRATION_API_URL (${base.replace('http://', 'http://ops:***@')}?token=***)`,
      );
      for (const status of [410, 418]) {
        expect(await callFor(status)).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(new RegExp(`^the API answered ${status} .*: nope: no product was created$`)) });
      }
      for (const status of [302, 307]) {
        const redirect = await callFor(status);
        expect(redirect).toMatchObject({ kind: 'invalid', reason: expect.stringContaining(`the API redirected (${status} `) });
        expect((redirect as { reason: string }).reason).toContain('to http://user:***@127.0.0.1/v2/api/sellers/');
        expect((redirect as { reason: string }).reason).toContain('?token=***');
      }
      for (const status of [202, 204, 201, 200]) {
        expect(await callFor(status)).toMatchObject({ kind: 'transient', answered: true, reason: expect.stringContaining(`the API answered ${status} `) });
      }
      // a request the API did not handle (408 Request Timeout, 425 Too Early) is sent again
      for (const status of [408, 425]) {
        expect(await callFor(status)).toMatchObject({ kind: 'transient', answered: true, reason: expect.stringMatching(new RegExp(`^the API answered ${status} .*: not handled, sent again$`)) });
      }
      const streak = new FailureStreak();
      for (const [i, status] of [404, 410, 418, 302, 202, 204, 201, 200, 408].entries()) {
        const outcome = await callFor(status);
        expect(usableAnswer(outcome)).toBe(true);
        expect(streak.note(usableAnswer(outcome)!, 1000 + i, `u:${i}`)).toBe(false);
      }
      // a 5xx still is no usable answer: TRIP_AFTER rows of them open the breaker
      const failing = await callFor(503);
      expect(failing).toMatchObject({ kind: 'transient' });
      expect(failing).not.toHaveProperty('answered');
      expect(usableAnswer(failing)).toBe(false);
      expect(Array.from({ length: TRIP_AFTER }, (_, i) => streak.note(usableAnswer(failing)!, 2000 + i, `v:${i}`)).at(-1)).toBe(true);
    } finally {
      client.close();
    }
  });
});
