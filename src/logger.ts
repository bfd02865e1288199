/**
 * The pino root logger. Everything else receives a child() of it.
 *
 * Secrets never reach a line: credentials inside URLs are masked wherever a
 * string is logged, and fields that commonly hold secrets are redacted.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { createRequire } from 'node:module';
import { maskUrl } from './mask-url.js';

export type { Logger };
export { maskUrl };

const REDACT = [
  'password',
  'token',
  'authorization',
  '*.password',
  '*.token',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
];

export function createLogger(
  opts: { level: string; pretty?: boolean | undefined; name?: string },
  destination?: DestinationStream,
): Logger {
  const pretty = opts.pretty ?? (destination === undefined && process.stdout.isTTY === true);
  const options = {
    level: opts.level,
    base: opts.name ? { name: opts.name, pid: process.pid } : { pid: process.pid },
    redact: { paths: REDACT, censor: '***' },
    formatters: {
      log(object: Record<string, unknown>) {
        for (const [k, v] of Object.entries(object)) if (typeof v === 'string') object[k] = maskUrl(v);
        return object;
      },
    },
    hooks: {
      logMethod(args: unknown[], method: (...a: unknown[]) => void) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? maskUrl(a) : a)));
      },
    },
    serializers: {
      err: (err: unknown) => {
        const e = err as { name?: string; message?: string; code?: string };
        return { type: e?.name, message: maskUrl(String(e?.message ?? err)), code: e?.code };
      },
    },
  };
  if (pretty && destination === undefined) {
    // In-process and synchronous: no transport thread per worker process.
    // loaded only when wanted: worker processes logging JSON never pay for it
    const pinoPretty = createRequire(import.meta.url)('pino-pretty') as (o: object) => DestinationStream;
    return pino(options, pinoPretty({ colorize: process.stdout.isTTY === true, sync: true, ignore: 'pid,hostname' }));
  }
  return destination ? pino(options, destination) : pino(options);
}
