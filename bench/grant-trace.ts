/**
 * BENCH_DEBUG's trace of a seller's grants and places: each worker process appends,
 * for every row granted, when its send may go (Redis ms), and for every answered
 * send, its place (the completion's Redis time). The bench then sets them beside
 * the API's arrivals, to tell the limiter's share of a window's start from the
 * pool's (the reply's trip back, the in-process wait, the request's own way out).
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Completion, PermitLimiter } from '../src/rate-limit/limiter.js';

/** The limiter, writing its grants and places to `dir`/grants.{pid}. */
export function traceGrants(limiter: PermitLimiter, dir: string): PermitLimiter {
  const file = join(dir, `grants.${process.pid}`);
  const note = (line: string) => appendFileSync(file, `${line}\n`);
  return {
    settings: limiter.settings,
    acquire: async (sellerId, member, sendId, home) => {
      const p = await limiter.acquire(sellerId, member, sendId, home);
      if (p.granted) note(`G ${member} ${p.redisNow + p.waitMs}`);
      return p;
    },
    ...(limiter.permitNext && {
      permitNext: async (...args: Parameters<NonNullable<PermitLimiter['permitNext']>>) => {
        const r = await limiter.permitNext!(...args);
        if (r?.permit.granted) note(`G ${r.sendId.slice(0, r.sendId.lastIndexOf('#'))} ${r.permit.redisNow + r.permit.waitMs}`);
        return r;
      },
    }),
    complete: async (args, final, retentionS) => {
      // the default limiter's completion says when it ran (its place in `sent`)
      const c: Completion & { redisNow?: number } = await limiter.complete(args, final, retentionS);
      const place = c.placedAt ?? c.redisNow;
      if (args.sendId !== '' && place !== undefined) note(`P ${args.sellerId} ${args.member} ${place}`);
      return c;
    },
    block: (sellerId, waitMs, sendId, home) => limiter.block(sellerId, waitMs, sendId, home),
    peek: (sellerId) => limiter.peek(sellerId),
  };
}

/** A seller's grant times and places, each sorted (Redis ms), from every process's trace in `dir`. */
export function readGrants(dir: string, sellerId: string): { grants: number[]; places: number[] } {
  const grantOf = new Map<string, number>();
  const placeOf = new Map<string, number>();
  for (const name of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      const f = line.split(' ');
      if (f[0] === 'G') grantOf.set(f[1]!, Number(f[2]));
      else if (f[0] === 'P' && f[1] === sellerId) placeOf.set(f[2]!, Number(f[3]));
    }
  }
  const members = [...placeOf.keys()].filter((m) => grantOf.has(m));
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  return { grants: sorted(members.map((m) => grantOf.get(m)!)), places: sorted(members.map((m) => placeOf.get(m)!)) };
}
