/**
 * The own Redis connection of a long-running command (`workers`, `console`).
 * It waits for Redis as the workers do, saying so at most every 5 s, and reads
 * Redis's settings once it first answers: warnings, or under --strict a refusal
 * before the command starts (redis-checks.ts).
 */
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { checkRedisSettings, refuseIfStrict } from '../redis-checks.js';
import { createRedis, describeRedis, missingDatabase, selectsDatabase, type RedisClient } from '../redis.js';
import { EXIT } from './exit.js';

/**
 * @param opts.persistence also warn about a single Redis that keeps nothing on disk
 * @throws RedisMisconfigured under `strict`, once Redis answered with a setting that refuses the start
 */
export async function connectService(config: Config, log: Logger, opts: { strict?: boolean; persistence?: boolean }): Promise<RedisClient> {
  const redis = createRedis(config, 'worker');
  let lastWarn = 0;
  redis.on('error', (err: Error) => {
    if (Date.now() - lastWarn > 5000) {
      lastWarn = Date.now();
      log.warn({ err }, `waiting for ${describeRedis(config)}`);
    }
  });
  redis.connect().catch(() => undefined);
  const database = new Promise<void>((resolve) => {
    redis.once('ready', () => {
      missingDatabase(redis, config).then((missing) => {
        if (missing === undefined) return resolve();
        // not a warning: run on, and every key would go to database 0
        log.error(missing);
        process.exit(EXIT.failure);
      }, () => resolve());
    });
  });
  const checked = new Promise<void>((resolve, reject) => {
    redis.once('ready', () => {
      checkRedisSettings(redis, { persistence: Boolean(opts.persistence) }).then((findings) => {
        for (const f of findings) log.warn({ check: f.kind }, f.message);
        refuseIfStrict(findings, Boolean(opts.strict));
        resolve();
      }).catch(reject);
    });
  });
  // ioredis runs every command in database 0 after a failed SELECT, in the order issued: with
  // another database selected, none is issued before that database is known to exist (the
  // command's first writes, such as the pool's presence, could land in database 0 ahead of the refusal)
  if (selectsDatabase(config)) await database;
  if (opts.strict) {
    try {
      await checked;
    } catch (err) {
      redis.disconnect();
      throw err;
    }
  } else {
    checked.catch((err: Error) => log.warn({ err }, 'could not check Redis settings'));
  }
  return redis;
}
