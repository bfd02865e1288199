/**
 * The evidence a row's failing calls are judged by (src/steering/outage.ts,
 * failingVerdict): when the API answered other rows while the row was failing, its
 * last attempt fails and it does not count toward the breaker; when nothing was
 * answered after it left it is an outage's row; between the two, held.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { apiAnsweredKey, apiFailingKey, clearApiFailing, failingVerdict, markApiAnswered, markApiFailing } from '../../src/steering/outage.js';
import type { RedisClient } from '../../src/redis.js';

let server: TestRedis;
let redis: RedisClient;
const ns = 'awf';
// the row judged: its first failing call was granted at 1000
const ROW = 'u1:20';
const SINCE = 1000;

beforeAll(async () => {
  server = await startRedis();
  redis = server.client() as unknown as RedisClient;
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});
beforeEach(async () => {
  await redis.del(apiAnsweredKey(ns), apiFailingKey(ns));
  await markApiFailing(redis, ns, ROW, SINCE);
});

describe('failingVerdict', () => {
  const verdict = (again: boolean) => failingVerdict(redis, ns, ROW, SINCE, again);
  it('nothing answered: alone, as in an outage', async () => {
    expect(await verdict(true)).toBe('alone');
  });

  it('a row granted after it was answered: failed, also at its first failing call', async () => {
    await markApiAnswered(redis, ns, SINCE + 5, SINCE + 200);
    expect(await verdict(false)).toBe('answered');
    expect(await verdict(true)).toBe('answered');
  });

  it('rows granted before it and answered while it was out: failed from its second failing call on', async () => {
    await markApiAnswered(redis, ns, SINCE - 3, SINCE + 250);
    // its first call: the rows sent behind it in an outage's first moment have not failed yet
    expect(await verdict(false)).toBe('unclear');
    // its own later failures do not count against it
    await markApiFailing(redis, ns, ROW, SINCE + 3000);
    expect(await verdict(true)).toBe('answered');
  });

  it('the same, but another row failed since: an outage that began as it was sent, unclear until that row is answered or ends', async () => {
    await markApiAnswered(redis, ns, SINCE - 3, SINCE + 250);
    await markApiFailing(redis, ns, 'u1:21', SINCE + 40);
    expect(await verdict(true)).toBe('unclear');
    await clearApiFailing(redis, ns, 'u1:21');
    expect(await verdict(true)).toBe('answered');
  });

  it('answers and failures before it was sent say nothing', async () => {
    await markApiAnswered(redis, ns, SINCE - 300, SINCE - 100);
    expect(await verdict(true)).toBe('alone');
    await markApiFailing(redis, ns, 'u1:5', SINCE - 50);
    await markApiAnswered(redis, ns, SINCE - 3, SINCE + 250);
    expect(await verdict(true)).toBe('answered');
  });

  it('the marks only move on, and the failing rows are bounded and expire', async () => {
    await markApiAnswered(redis, ns, SINCE + 5, SINCE + 200);
    await markApiAnswered(redis, ns, SINCE - 500, SINCE - 400);
    expect(await verdict(false)).toBe('answered');
    for (let i = 0; i < 150; i++) await markApiFailing(redis, ns, `u2:${i}`, SINCE + i);
    expect(await redis.zcard(apiFailingKey(ns))).toBe(100);
    expect(await redis.pttl(apiFailingKey(ns))).toBeGreaterThan(3_000_000);
  });
});
