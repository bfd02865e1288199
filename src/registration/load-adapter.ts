/**
 * REGISTRATION_ADAPTER -> the adapter the pool runs (marketplace.md). A module
 * that cannot be loaded, or lacks request or outcome, stops start-up with one
 * sentence naming the variable.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config-error.js';
import { shapeOf, type Adapter } from './adapter.js';
import { builtinAdapter } from './builtin-adapter.js';
import type { Redactor } from './redactor.js';

/** How long the module may take to load (a top-level await that never settles would otherwise end the process silently). */
export const ADAPTER_LOAD_MS = 15_000;

export interface LoadedAdapter {
  adapter: Adapter;
  /** How messages name it: "the built-in adapter" or "adapter <file>". */
  name: string;
  builtin: boolean;
  /** True when the adapter gets tokens (tokenRequest and tokenOutcome). */
  tokens: boolean;
  /** The adapter's `announcesRules`: the marketplace announces every seller's rule in its answers. */
  announcesRules: boolean;
}

/**
 * @param redactor masks the credentials in the sentence when the module fails to load (its
 *   error may quote them); the caller reads the credentials file first
 * @param loadMs how long the module may take to load
 */
export async function loadAdapter(
  config: { registrationAdapter: string | undefined; registrationToken: string | undefined; apiUrl?: string },
  cwd = process.cwd(),
  redactor?: Redactor,
  loadMs = ADAPTER_LOAD_MS,
): Promise<LoadedAdapter> {
  if (!config.registrationAdapter) {
    return { adapter: builtinAdapter({ registrationToken: config.registrationToken, apiUrl: config.apiUrl }), name: 'the built-in adapter', builtin: true, tokens: false, announcesRules: false };
  }
  const given = config.registrationAdapter;
  const file = isAbsolute(given) ? given : resolve(cwd, given);
  const shown = `REGISTRATION_ADAPTER=${JSON.stringify(given)}`;
  if (!existsSync(file)) throw new ConfigError(`${shown} is invalid: no such file (${file}).`);
  let mod: { default?: unknown };
  let timer: NodeJS.Timeout | undefined;
  try {
    mod = (await Promise.race([
      import(pathToFileURL(file).href),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`it did not finish loading within ${loadMs / 1000} s (a top-level await that never ends?)`)), loadMs);
      }),
    ])) as { default?: unknown };
  } catch (err) {
    const why = (err as Error)?.message?.split('\n')[0] ?? 'unknown error';
    throw new ConfigError(`${shown} could not be loaded: ${(redactor ? redactor.redact(why) : why).slice(0, 200)}.`);
  } finally {
    clearTimeout(timer);
  }
  const a = mod.default as Record<string, unknown> | undefined;
  if (!a || typeof a !== 'object') throw new ConfigError(`${shown} is invalid: the module has no default export object (export default { request, outcome }).`);
  const missing = ['request', 'outcome'].filter((m) => typeof a[m] !== 'function');
  if (missing.length > 0) throw new ConfigError(`${shown} is invalid: its default export has no ${missing.join(' or ')} function.`);
  const hasTokenRequest = typeof a.tokenRequest === 'function';
  const hasTokenOutcome = typeof a.tokenOutcome === 'function';
  if (hasTokenRequest !== hasTokenOutcome) {
    throw new ConfigError(`${shown} is invalid: tokenRequest and tokenOutcome go together, and it has only ${hasTokenRequest ? 'tokenRequest' : 'tokenOutcome'}.`);
  }
  if (a.announcesRules !== undefined && typeof a.announcesRules !== 'boolean') {
    throw new ConfigError(`${shown} is invalid: its announcesRules is ${shapeOf(a.announcesRules)}, expected true or false.`);
  }
  const base = file.split(/[\\/]/).pop()!;
  return { adapter: a as unknown as Adapter, name: `adapter ${base}`, builtin: false, tokens: hasTokenRequest, announcesRules: a.announcesRules === true };
}
