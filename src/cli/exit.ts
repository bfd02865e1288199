/** Exit codes (cli.md) and the one-sentence error path. Only src/cli/ exits the process. */
import { ConfigError } from '../config-error.js';
import { UploadRejected } from '../excel/errors.js';
import { stripControls } from '../excel/cell-rules.js';
import { maskUrl } from '../mask-url.js';
import { NotReplicated, RedisMisconfigured, RedisUnavailable, refusedCredentials, refusedCredentialsSentence } from '../redis-errors.js';
import { ConsoleRefused } from '../console/errors.js';

/** 4: upload only: the rows are on the master, but no replica confirmed them in time. */
export const EXIT = { ok: 0, failure: 1, usage: 2, someInvalid: 3, notReplicated: 4 } as const;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Text bound for a terminal: no control sequences, no credentials. */
export function safeText(text: string): string {
  return maskUrl(stripControls(text));
}

/** A command cannot start as asked (a port taken, say); the message is one sentence saying what to change. */
export class CannotStart extends Error {
  override readonly name = 'CannotStart';
}

/**
 * What a command says when it cannot listen on `host:port` (`what`: the server it starts;
 * `otherwise`: what to change besides the port): a port taken, or one it may not use.
 * Any other error is returned as it is.
 */
export function cannotListen(err: unknown, what: string, host: string, port: number, otherwise = ''): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new CannotStart(`port ${port} on ${host} is taken: pick a free one with --port.`);
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') return new CannotStart(`the ${what} cannot listen on ${host}:${port} (${code}): pick another port with --port${otherwise}.`);
  return err;
}

/** Writes the one sentence for `err` on stderr and returns the exit code it calls for. */
export function explain(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`error: ${safeText(err.message)}\n`);
    return EXIT.usage;
  }
  if (err instanceof NotReplicated) {
    process.stderr.write(`${safeText(err.message.charAt(0).toUpperCase() + err.message.slice(1))}\n`);
    return EXIT.notReplicated;
  }
  if (refusedCredentials(err)) {
    // a long-running command (workers, console) meets it in its first commands, not at a checked connect
    process.stderr.write(`${safeText(refusedCredentialsSentence('Redis', err))}\n`);
    return EXIT.failure;
  }
  const known = err instanceof UploadRejected || err instanceof ConfigError || err instanceof RedisUnavailable || err instanceof RedisMisconfigured || err instanceof ConsoleRefused || err instanceof CannotStart;
  const message = err instanceof Error ? err.message : String(err);
  const sentence = known ? message : `unexpected error: ${message}`;
  process.stderr.write(`${safeText(sentence.charAt(0).toUpperCase() + sentence.slice(1))}\n`);
  if (!known && process.env.LOG_LEVEL === 'debug' && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  return EXIT.failure;
}

/**
 * Exits with `code` once stdout and stderr have handed on everything written to
 * them: process.exit() drops what a pipe has not taken yet (`status --json | jq`
 * over a thousand uploads got 219 KB of its 320 KB, and invalid JSON).
 */
export function exitWhenWritten(code: number): void {
  let open = 2;
  const done = () => {
    if (--open === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/** The one-sentence error path: the sentence, then the exit once it is written. */
export function fail(err: unknown): void {
  exitWhenWritten(explain(err));
}
