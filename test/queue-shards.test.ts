import { describe, expect, it } from 'vitest';
import { keySlot, shardOf, shardPrefixes } from '../src/queue-shards.js';

describe('queue shards', () => {
  it('computes key slots as Redis Cluster does', () => {
    // values from CLUSTER KEYSLOT
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('bar')).toBe(5061);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('foo{}{bar}')).toBe(keySlot('foo{}{bar}'));
    expect(keySlot('123456789')).toBe(0x31c3 % 16384);
  });

  it('one shard is the plain prefix; n shards fall in n equal slot ranges', () => {
    expect(shardPrefixes('{bulk-register}', 1)).toEqual(['{bulk-register}']);
    for (const n of [2, 3, 6, 9, 16]) {
      const prefixes = shardPrefixes('{bulk-register}', n);
      expect(new Set(prefixes).size).toBe(n);
      prefixes.forEach((p, i) => expect(Math.floor((keySlot(`${p}:registrations:wait`) * n) / 16384)).toBe(i));
    }
    expect(shardPrefixes('{bulk-register}', 6)).toEqual(shardPrefixes('{bulk-register}', 6));
  });

  it('keeps a seller on one shard and spreads sellers', () => {
    const prefixes = shardPrefixes('{q}', 6);
    expect(shardOf('S1', prefixes)).toBe(shardOf('S1', prefixes));
    const counts = new Map<string, number>();
    for (let i = 0; i < 600; i++) counts.set(shardOf(`seller-${i}`, prefixes), (counts.get(shardOf(`seller-${i}`, prefixes)) ?? 0) + 1);
    expect(counts.size).toBe(6);
    for (const n of counts.values()) expect(n).toBeGreaterThan(60);
  });
});
