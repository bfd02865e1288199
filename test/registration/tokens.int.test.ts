/**
 * SellerTokens against a private redis-server, with two instances standing for two
 * worker processes and a token endpoint the test answers by hand: a token one process
 * fetched is masked by the other, which only read it; a token renewed after a refusal
 * pauses the seller when it is refused before any call went through with it, and is
 * renewed again once one has; a refusal names the credentials that were sent; a row
 * does not hold its slot while another fetches the token, and a token endpoint without
 * a usable answer is asked at most once per TOKEN_RETRY_MS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { CredentialStore } from '../../src/registration/credentials.js';
import { Redactor } from '../../src/registration/redactor.js';
import { SellerTokens, TOKEN_RETRY_MS, TOKEN_WAIT_MS, type TokenAnswer } from '../../src/registration/tokens.js';
import type { RegistrationClient } from '../../src/registration/client.js';
import type { TokenOutcome } from '../../src/registration/adapter.js';
import type { RedisClient } from '../../src/redis.js';

let redis: TestRedis;
const dir = mkdtempSync(join(tmpdir(), 'br-tokens-'));
const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;
let seq = 0;

/** The token endpoint: each request waits for the test's answer. */
class Endpoint {
  asked: Array<{ credentials: unknown; answer: (out: TokenOutcome) => void }> = [];
  auto: ((n: number) => TokenOutcome) | undefined;
  readonly client = {
    requestToken: (ctx: { credentials: unknown }) =>
      new Promise<TokenOutcome>((resolve) => {
        this.asked.push({ credentials: ctx.credentials, answer: resolve });
        if (this.auto) resolve(this.auto(this.asked.length));
      }),
  } as unknown as RegistrationClient;
}

function credentialsFile(entries: object): string {
  const file = join(dir, `c-${++seq}.json`);
  writeFileSync(file, JSON.stringify(entries));
  return file;
}

function processOf(endpoint: Endpoint, file: string, ns: string) {
  const redactor = new Redactor();
  const credentials = CredentialStore.open(file, redactor);
  const tokens = new SellerTokens({ redis: redis.client() as unknown as RedisClient, ns, client: endpoint.client, credentials, redactor, log: silent, timeoutMs: 3000 });
  return { redactor, credentials, tokens };
}

const tokenOf = (a: TokenAnswer) => ('token' in a ? a.token : `(no token: ${JSON.stringify(a)})`);

beforeAll(async () => {
  redis = await startRedis();
}, 30_000);

afterAll(async () => {
  await redis?.stop();
});

describe('tokens shared by the pool', () => {
  it('are masked in every process, also one that only read the token from Redis', async () => {
    const endpoint = new Endpoint();
    endpoint.auto = (n) => ({ token: `tok-shared-secret-${n}`, expiresInMs: 60_000 });
    const file = credentialsFile({ S1: { clientSecret: 'cs-one-1234' } });
    const a = processOf(endpoint, file, 'mask');
    const b = processOf(endpoint, file, 'mask');
    expect(tokenOf(await a.tokens.get('S1'))).toBe('tok-shared-secret-1');
    // a's own redactor learns it from the client in the product; b only reads it from Redis
    expect(tokenOf(await b.tokens.get('S1'))).toBe('tok-shared-secret-1');
    expect(endpoint.asked).toHaveLength(1);
    expect(b.redactor.redact('refused: your token tok-shared-secret-1 was revoked')).toBe('refused: your token [redacted] was revoked');
  });

  it('pause the seller when a renewed token is refused before any call went through with it, and renew again once one has', async () => {
    const endpoint = new Endpoint();
    endpoint.auto = (n) => ({ token: `tok-renew-${n}`, expiresInMs: 60_000 });
    const file = credentialsFile({ S1: { clientSecret: 'cs-two-1234' } });
    const a = processOf(endpoint, file, 'renew');
    const b = processOf(endpoint, file, 'renew');
    const first = await a.tokens.get('S1');
    // a call with it is refused: a fresh token, marked as fetched after a refusal
    const second = await a.tokens.renew('S1', tokenOf(first));
    expect(second).toEqual({ token: 'tok-renew-2', renewed: true });
    expect(await b.tokens.get('S1')).toEqual({ token: 'tok-renew-2', renewed: true });
    // refused at once too: the processor pauses the seller
    expect(await b.tokens.unproven('S1', 'tok-renew-2')).toBe(true);
    // a call went through with it in process a: b, which still holds it as renewed, sees that in Redis
    a.tokens.proven('S1', 'tok-renew-2');
    await new Promise((r) => setTimeout(r, 100));
    expect(await b.tokens.unproven('S1', 'tok-renew-2')).toBe(false);
    // so its revocation later is renewed, not a pause
    expect(tokenOf(await b.tokens.renew('S1', 'tok-renew-2'))).toBe('tok-renew-3');
    // a proof that comes late for a token since replaced marks nothing
    a.tokens.proven('S1', 'tok-renew-2');
    const third = await a.tokens.renew('S1', 'tok-renew-3');
    expect(third).toEqual({ token: 'tok-renew-4', renewed: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(await b.tokens.unproven('S1', 'tok-renew-4')).toBe(true);
  });

  it('name, in a refusal, the credentials that were sent, also when the file changed while the request was out', async () => {
    const endpoint = new Endpoint();
    const file = credentialsFile({ S1: { clientSecret: 'cs-old-1234' } });
    const a = processOf(endpoint, file, 'fp');
    const sentFp = a.credentials.fingerprint('S1');
    const answer = a.tokens.get('S1');
    await until('the token request', () => endpoint.asked.length === 1, 5000, 10);
    writeFileSync(file, JSON.stringify({ S1: { clientSecret: 'cs-new-5678' } }));
    const later = new Date(Date.now() + 5000);
    utimesSync(file, later, later);
    expect(a.credentials.check()).toBe(true);
    endpoint.asked[0]!.answer({ kind: 'unauthorized', reason: 'INVALID_CLIENT: bad signature' });
    const refused = await answer;
    expect(refused).toEqual({ rejected: 'INVALID_CLIENT: bad signature', fp: sentFp });
    // the pause it leads to ends at once: the file holds other credentials than those refused
    expect(a.credentials.fingerprint('S1')).not.toBe(sentFp);
  });

  it('let a row wait for another row\'s token request only briefly, and ask an endpoint without answers at most once per TOKEN_RETRY_MS', async () => {
    const endpoint = new Endpoint();
    const file = credentialsFile({ S1: { clientSecret: 'cs-hang-1234' } });
    const a = processOf(endpoint, file, 'hang');
    const b = processOf(endpoint, file, 'hang');
    // the endpoint hangs: a's first row waits for it (its own request), its other rows and b's do not
    const fetching = a.tokens.get('S1');
    await until('the token request', () => endpoint.asked.length === 1, 5000, 10);
    const started = Date.now();
    const [sameProcess, otherProcess] = await Promise.all([a.tokens.get('S1'), b.tokens.get('S1')]);
    const waited = Date.now() - started;
    expect(sameProcess).toMatchObject({ waitMs: TOKEN_WAIT_MS });
    expect(otherProcess).toMatchObject({ waitMs: TOKEN_WAIT_MS });
    expect(waited).toBeLessThan(TOKEN_WAIT_MS + 500);
    expect(endpoint.asked).toHaveLength(1);
    // no usable answer: every process's rows wait TOKEN_RETRY_MS before the next request
    endpoint.asked[0]!.answer({ kind: 'transient', reason: 'token request: the API did not answer within 3000 ms' });
    expect(await fetching).toMatchObject({ waitMs: TOKEN_RETRY_MS });
    expect(await b.tokens.get('S1')).toMatchObject({ reason: 'the token endpoint gave no usable answer' });
    expect(endpoint.asked).toHaveLength(1);
    await new Promise((r) => setTimeout(r, TOKEN_RETRY_MS + 50));
    endpoint.auto = () => ({ token: 'tok-after-outage', expiresInMs: 60_000 });
    expect(tokenOf(await b.tokens.get('S1'))).toBe('tok-after-outage');
    expect(endpoint.asked).toHaveLength(2);
  }, 20_000);
});
