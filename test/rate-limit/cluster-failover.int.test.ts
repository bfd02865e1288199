/**
 * The per-master pause after a lossy failover on Redis Cluster: the slot ranges
 * of a master that lost a grant are recorded for every worker, and no other
 * master's. Run on a private single redis-server (the scripts touch one slot
 * each); the failover itself is in test/ha/cluster-failover-case.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCommands } from '../../src/lua-commands.js';
import type { RedisClient } from '../../src/redis.js';
import { checkClusterGrants, masterRanges, recordedSlotSuspects, type SlotRange } from '../../src/rate-limit/cluster-failover.js';
import { keySlot } from '../../src/queue-shards.js';
import { sellerKeys } from '../../src/keys.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

describe('masterRanges', () => {
  it('gives every range of the master serving a slot, and only its', () => {
    const slots = Array.from({ length: 16384 }, (_, s) => [s < 5000 || s >= 15000 ? 'a:1' : s < 10000 ? 'b:1' : 'c:1', 'replica']);
    expect(masterRanges(slots, 3)).toEqual([[0, 4999], [15000, 16383]]);
    expect(masterRanges(slots, 15001)).toEqual([[0, 4999], [15000, 16383]]);
    expect(masterRanges(slots, 7000)).toEqual([[5000, 9999]]);
  });
  it('falls back to the slot itself when no master is known for it', () => {
    expect(masterRanges([], 42)).toEqual([[42, 42]]);
  });
});

describe('checkClusterGrants against a real Redis', () => {
  let server: TestRedis;
  let redis: RedisClient;
  const ns = 'cf-test';
  const span = 10_000;
  beforeAll(async () => {
    server = await startRedis();
    redis = defineCommands(server.client());
  });
  afterAll(async () => server.stop());

  const now = async () => {
    const [s, us] = await redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };

  it('records the ranges of the master whose grant is missing, not those whose grants are there or too old', async () => {
    const kept = sellerKeys(ns, 'seller-kept').sent;
    const lost = sellerKeys(ns, 'seller-lost').sent;
    const old = sellerKeys(ns, 'seller-old').sent;
    const t = await now();
    await redis.zadd(kept, t, 'row#1');
    // seller-lost's grant never reached its master; seller-old's is out of the window
    const ranges = new Map<string, SlotRange[]>([[kept, [[0, 99]]], [lost, [[100, 199], [300, 399]]], [old, [[200, 299]]]]);
    const found = await checkClusterGrants(redis, ns, span, [
      { sent: old, sendId: 'row#0', at: t - span - 1 },
      { sent: kept, sendId: 'row#1', at: t },
      { sent: lost, sendId: 'row#2', at: t },
    ], (key) => ranges.get(key)!);
    expect(found.map((f) => [f.missing.sent, f.ranges])).toEqual([[lost, [[100, 199], [300, 399]]]]);
    expect(found[0]!.until).toBeGreaterThan(t + span);

    const recorded = (await recordedSlotSuspects(redis, ns)).ranges;
    expect(recorded.map((r) => r.range).sort((a, b) => a[0] - b[0])).toEqual([[100, 199], [300, 399]]);
    expect(recorded.every((r) => r.until === found[0]!.until)).toBe(true);
    // the slot of a key tells which seller a range holds back
    expect(keySlot(lost)).toBe(keySlot('{seller-lost}'));
  });

  it('keeps a later time for a range and drops the ones long past', async () => {
    const sent = sellerKeys(ns, 'seller-again').sent;
    const t = await now();
    await checkClusterGrants(redis, ns, span, [{ sent, sendId: 'x#1', at: t }], () => [[100, 199]]);
    const [range] = (await recordedSlotSuspects(redis, ns)).ranges.filter((r) => r.range[0] === 100);
    expect(range!.until).toBeGreaterThanOrEqual(t + span);
    await redis.hset(`${ns}:redis-epoch`, 'suspect:500-599', t - 120_000);
    await checkClusterGrants(redis, ns, span, [{ sent, sendId: 'x#2', at: t }], () => [[600, 699]]);
    expect(await redis.hexists(`${ns}:redis-epoch`, 'suspect:500-599')).toBe(0);
  });
});
