/**
 * Telling a row the API refuses from an outage when nothing else is being sent
 * (failingVerdict in outage.ts judges a failing row by the answers to other rows). A sheet's
 * last row at its seller's pace leaves after its neighbours were answered, and its retries
 * have no company at all: nothing would ever tell it from an outage, and the upload would
 * not end. Its last attempt then sends again a row the API registered before, with that
 * row's key and body (registration-api.md: a replay, answered 200 with the same productId;
 * it creates nothing and counts toward no rule). Answered: the API answers, so it refuses
 * this row, which fails with its reason. No answer: an outage, and the row is held.
 *
 * Rare and light: at most one replay in the pool per REPLAY_EVERY_MS, only for a row at its
 * last attempt with nothing answered since it began failing, of a seller that may send now
 * (its rule is kept even were the replay counted). A row refused one because another row's
 * went in that time is judged by that one's answer (noted in `api-answered`) on its next call.
 */
import type { Job } from 'bullmq';
import { rowMember } from '../keys.js';
import type { Logger } from '../logger.js';
import type { RegistrationJob } from '../queue.js';
import type { PermitLimiter } from '../rate-limit/limiter.js';
import { redisTimeMs, type RedisClient } from '../redis.js';
import type { RegistrationClient } from '../registration/client.js';
import type { CredentialStore } from '../registration/credentials.js';
import type { SellerTokens } from '../registration/tokens.js';
import { markApiAnswered, usableAnswer } from './outage.js';

export const REPLAY_EVERY_MS = 2000;
/** How many of the queue's latest finished rows are looked through for one registered. */
const LOOKED_AT = 50;

export const apiReplayKey = (ns: string) => `${ns}:api-replay`;

export interface ReplayDeps {
  redis: RedisClient;
  ns: string;
  api: RegistrationClient;
  limiter: PermitLimiter;
  log: Logger;
  credentials?: CredentialStore;
  tokens?: SellerTokens;
  /** Whether the seller's rows are held now (paused): none of its rows is replayed. */
  paused: (sellerId: string) => boolean;
  /** The host's clock (ms), handed to the adapter as a row's call is. */
  now: () => number;
}

/** The latest row of `job`'s queue that the API registered, other than `job`'s own. */
async function registeredRow(redis: RedisClient, job: Job<RegistrationJob>): Promise<RegistrationJob | undefined> {
  const queue = job.queueQualifiedName;
  const ids = await redis.zrevrange(`${queue}:completed`, 0, LOOKED_AT - 1);
  if (ids.length === 0) return undefined;
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(`${queue}:${id}`, 'data', 'returnvalue');
  const replies = (await pipeline.exec()) ?? [];
  for (const [i, id] of ids.entries()) {
    if (id === job.id) continue;
    const [data, returnvalue] = (replies[i]?.[1] ?? []) as Array<string | null>;
    if (!data || !returnvalue) continue;
    try {
      if ((JSON.parse(returnvalue) as { outcome?: string }).outcome !== 'registered') continue;
      return JSON.parse(data) as RegistrationJob;
    } catch {
      // not a job this pool wrote
    }
  }
  return undefined;
}

/**
 * What sending a registered row again told: `answered`, the API answered it (noted in
 * `api-answered` at that moment, Redis's clock, for every process's failingVerdict);
 * `unanswered`, it got no usable answer, or none could be sent (no registered row at hand,
 * its seller paused, without room or without a token); `another`, another row's went in the
 * last REPLAY_EVERY_MS, and may still be out: its answer judges this row on its next call.
 */
export type Replay = 'answered' | 'unanswered' | 'another';

/** Replays a registered row, when the pool has not done so in the last REPLAY_EVERY_MS. */
export async function replayRegistered(deps: ReplayDeps, job: Job<RegistrationJob>): Promise<Replay> {
  const { redis, ns } = deps;
  if ((await redis.set(apiReplayKey(ns), '1', 'PX', REPLAY_EVERY_MS, 'NX')) !== 'OK') return 'another';
  const known = await registeredRow(redis, job);
  if (!known || deps.paused(known.sellerId)) return 'unanswered';
  const { sellerId, uploadId, row, product } = known;
  // only a seller with room for a row now: were the marketplace to count the replay, it
  // still keeps the rule
  if ((await deps.limiter.peek(sellerId)).nextPermitInMs > 0) return 'unanswered';
  let token: string | undefined;
  if (deps.tokens) {
    const t = await deps.tokens.get(sellerId);
    if (!('token' in t)) return 'unanswered';
    token = t.token;
  }
  const outcome = await deps.api
    .register({
      sellerId, uploadId, row, idempotencyKey: rowMember(uploadId, row), product, attributes: known.attributes ?? {},
      credentials: deps.credentials?.for(sellerId), ...(token ? { token } : {}), now: deps.now(),
    })
    .catch((err: Error) => ({ kind: 'transient' as const, reason: err.message }));
  const answered = usableAnswer(outcome) === true && outcome.kind !== 'throttled';
  deps.log.info({ sellerId: job.data.sellerId, uploadId: job.data.uploadId, row: job.data.row, replayed: { sellerId, uploadId, row }, answered },
    answered ? 'a registered row sent again was answered: the API refuses this row, it is no outage' : 'a registered row sent again got no answer either: held as in an outage');
  if (!answered) return 'unanswered';
  const at = redisTimeMs(await redis.time());
  await markApiAnswered(redis, ns, at, at);
  return 'answered';
}
