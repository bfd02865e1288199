/**
 * The answer of pause and resume (console.md, JSON API): the seller as in
 * `status --json`, the same fields whether or not the seller has uploads or a
 * pause (a seller never seen gets the configured rule).
 */
import type { Config } from '../config.js';
import { readStatus, statusJson } from '../progress/status.js';
import type { RedisClient } from '../redis.js';

export type SellerJson = ReturnType<typeof statusJson>['sellers'][number];

export async function sellerStatusJson(redis: RedisClient, config: Config, sellerId: string): Promise<SellerJson> {
  const report = await readStatus(redis, config, { sellerId, listSeller: true });
  return statusJson(report).sellers.find((s) => s.sellerId === sellerId)!;
}
