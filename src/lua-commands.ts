/**
 * The project's Lua scripts (lua/) as commands on a connection. ioredis
 * `defineCommand` sends EVALSHA and re-sends the script after NOSCRIPT (a
 * restarted or failed-over Redis), so callers never see it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { LUA_DIR } from './paths.js';

type Reply5 = [number, number, number, number, number];

export interface LuaCommands {
  /** lua/sliding-window.lua */
  acquirePermit(
    plan: string, sent: string, rule: string, blocked: string, throttle: string, lag: string, defer: string, apiRule: string,
    member: string, sendId: string, limit: number, windowMs: number, guardMs: number, holdMs: number,
    answerHintMs: number, answerHintAt: number, suspectUntil: number, announcing: 0 | 1,
  ): Promise<[...Reply5, number, number, 0 | 1, number]>;
  /** lua/permit-next.lua: [] or [jobId, sendId, ...the reply of acquirePermit, sellerId, home] */
  permitNext(
    active: string, jobPrefix: string, token: string, namespace: string, nonce: string, sellerPrefix: string,
    limit: number, windowMs: number, guardMs: number, holdMs: number, answerHintMs: number, answerHintAt: number,
    finishedJobId: string, suspectUntil: number, depth: number, pinnedOnly: 0 | 1, expectedAt: number, announcing: 0 | 1,
  ): Promise<[] | [string, string, ...Reply5, number, number, 0 | 1, number, string, string]>;
  /** lua/complete-send.lua */
  completeSend(
    plan: string, sent: string, upload: string, rows: string, lag: string, rule: string, blocked: string,
    member: string, sendId: string, row: number, outcome: string, detail: string,
    limit: number, windowMs: number, guardMs: number, retentionS: number, wantNextPermit: 0 | 1, sentAt: number,
    answerSample: 0 | 1, answeredMsAgo: number, unsent: 0 | 1, holdMs: number,
  ): Promise<[...Reply5, number, number, number, number, number, number?, number?]>;
  /** lua/defer-rows.lua: the seller's rows are deferred for `deferMs` from now (Redis's clock) and noted; returns until when */
  deferRows(defer: string, deferred: string, deferMs: number, spanMs: number, ...rows: string[]): Promise<number>;
  /** lua/block-seller.lua */
  blockSeller(blocked: string, sent: string, waitMs: number, sendId: string, spanMs: number): Promise<number>;
  /** lua/token-bucket.lua (bench comparison) */
  tokenBucket(bucket: string, limit: number, windowMs: number): Promise<[number, number]>;
  /** lua/pin-home.lua: numkeys, the pin, the seller's own-tag keys, then the shard to pin to */
  pinHome(numKeys: number, ...keysThenShard: string[]): Promise<string>;
  /** lua/pool-presence.lua: writes a pool's presence stamped with Redis's TIME */
  poolPresence(pools: string, op: 'write', poolId: string, presenceJson: string, ttlMs: number): Promise<number>;
  /** lua/pool-presence.lua: Redis's clock and every pool's field */
  poolPresence(pools: string, op: 'read'): Promise<[number, string[]]>;
  /** lua/peek-permit.lua */
  peekPermit(
    plan: string, sent: string, rule: string, blocked: string, defer: string,
    limit: number, windowMs: number, guardMs: number, holdMs: number,
  ): Promise<[number, number, number, number, number, number, number, number]>;
}

/** `keys` undefined: the caller passes how many keys first. */
const SCRIPTS: Record<keyof LuaCommands, { file: string; keys: number | undefined }> = {
  acquirePermit: { file: 'sliding-window.lua', keys: 8 },
  deferRows: { file: 'defer-rows.lua', keys: 2 },
  permitNext: { file: 'permit-next.lua', keys: 1 },
  completeSend: { file: 'complete-send.lua', keys: 7 },
  blockSeller: { file: 'block-seller.lua', keys: 2 },
  peekPermit: { file: 'peek-permit.lua', keys: 5 },
  tokenBucket: { file: 'token-bucket.lua', keys: 1 },
  pinHome: { file: 'pin-home.lua', keys: undefined },
  poolPresence: { file: 'pool-presence.lua', keys: 1 },
};

/**
 * A script's text as Redis runs it: each `--#include lib/x.lua` line replaced by that file
 * (Redis scripts cannot load modules). `dir` is laid out as lua/ (the bench compares copies).
 */
export function luaSourceIn(dir: string, file: string): string {
  return readFileSync(join(dir, file), 'utf8').replace(/^--#include (\S+)$/gm, (_, lib: string) => luaSourceIn(dir, lib));
}

let scriptSource: Map<string, string> | undefined;
/** A script of lua/, read once per process. */
function luaSource(file: string): string {
  scriptSource ??= new Map();
  let lua = scriptSource.get(file);
  if (lua === undefined) {
    lua = luaSourceIn(LUA_DIR, file);
    scriptSource.set(file, lua);
  }
  return lua;
}

/** Defines the project's Lua commands on a connection (idempotent per connection). */
export function defineCommands<T extends Redis | Cluster>(client: T): T & LuaCommands {
  for (const [name, { file, keys }] of Object.entries(SCRIPTS)) {
    if (typeof (client as unknown as Record<string, unknown>)[name] !== 'function') {
      client.defineCommand(name, { ...(keys === undefined ? {} : { numberOfKeys: keys }), lua: luaSource(file) });
    }
  }
  return client as T & LuaCommands;
}
