/**
 * A bad setting, said in one sentence per variable (config.ts). On its own so
 * that a worker process, which takes its settings already checked from the pool
 * (worker-main.ts), can raise one without loading the schema's library.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
