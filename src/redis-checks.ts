/**
 * Start-up checks of the Redis settings the queue depends on, read with CONFIG GET:
 * - maxmemory-policy must be noeviction: an evicting Redis drops queued rows and
 *   the limiter's records of sends under memory pressure, silently.
 * - a single node with neither AOF nor RDB keeps nothing across a restart
 *   (checked for `workers`, once).
 * A managed Redis that refuses CONFIG is reported once and the program goes on.
 * Findings are values; the caller decides whether one refuses the start (--strict).
 */
import { Cluster } from 'ioredis';
import type { RedisClient } from './redis.js';
import { RedisMisconfigured } from './redis-errors.js';

export interface Finding {
  /** `eviction` refuses the start under --strict; the others only inform. */
  kind: 'eviction' | 'no-persistence' | 'unreadable';
  /** One sentence for an operator. */
  message: string;
}

export { RedisMisconfigured };

async function configGet(node: { config(op: 'GET', key: string): Promise<unknown> }, key: string): Promise<string> {
  const reply = (await node.config('GET', key)) as string[];
  return reply[1] ?? '';
}

/**
 * Reads the settings of every master (one node, or each master of a cluster).
 * @param opts.persistence also check that a single node keeps its data (workers)
 */
export async function checkRedisSettings(redis: RedisClient, opts: { persistence?: boolean } = {}): Promise<Finding[]> {
  const cluster = redis instanceof Cluster;
  const nodes = cluster ? redis.nodes('master') : [redis];
  const findings: Finding[] = [];
  for (const node of nodes) {
    const where = cluster ? `Redis node ${node.options.host}:${node.options.port}` : 'Redis';
    let policy: string;
    try {
      policy = await configGet(node, 'maxmemory-policy');
    } catch (err) {
      findings.push({
        kind: 'unreadable',
        message: `could not read ${where}'s settings (${(err as Error).message.split('\n')[0]}): make sure its maxmemory-policy is noeviction, as the queue needs.`,
      });
      return findings;
    }
    if (policy !== 'noeviction') {
      findings.push({
        kind: 'eviction',
        message: `${where} has maxmemory-policy ${policy}: when memory runs short it may evict queued rows and the limiter's records of sends (rows lost, sellers sent over their rule); set maxmemory-policy noeviction.`,
      });
    }
    if (opts.persistence && !cluster) {
      const [aof, save] = await Promise.all([configGet(node, 'appendonly'), configGet(node, 'save')]);
      if (aof !== 'yes' && save.trim() === '') {
        findings.push({
          kind: 'no-persistence',
          message: `${where} keeps nothing on disk (appendonly no, no save points): a restart loses every queued row; run it with appendonly yes.`,
        });
      }
    }
  }
  return findings;
}

/** Under --strict, an evicting Redis refuses the start. */
export function refuseIfStrict(findings: Finding[], strict: boolean): void {
  const eviction = findings.find((f) => f.kind === 'eviction');
  if (strict && eviction) throw new RedisMisconfigured(`${eviction.message.replace(/\.$/, '')}; --strict refuses to start.`);
}
