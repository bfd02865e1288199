/**
 * The pool hands its worker processes the settings it has already checked, as
 * JSON in one environment variable: a worker then does not load the schema's
 * library (zod: about 14 MB of each process's RSS, measured with 16 of them).
 * The children's environment holds the same values as variables anyway.
 */
import type { Config } from '../config.js';

export const WORKER_CONFIG_ENV = 'BULK_REGISTER_WORKER_CONFIG';

export function workerConfigEnv(config: Config): Record<string, string> {
  return { [WORKER_CONFIG_ENV]: JSON.stringify(config) };
}
