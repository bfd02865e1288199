/**
 * Says so when Redis stops answering a command-line run.
 *
 * A Redis that hangs (stopped, stalled on a slow disk, or a Sentinel master
 * before the Sentinels name another) keeps its TCP connections open and
 * answers nothing, so `connectTimeout` never fires, and `status`, `upload` and
 * the rest waited without a word for as long as it hung. They still wait (a
 * command already sent may yet run, so giving up could not say what was done),
 * but after REDIS_WAIT_NOTICE_MS without an answer they say, once, on stderr,
 * what they wait for and how to stop. An answer that comes later goes on as
 * before. Long-lived processes (the pool, the console, `status --wait`) are
 * left alone: they log Redis's absence themselves.
 */
import type { Cluster, Redis } from 'ioredis';

/** How long a command-line run waits for an answer before it says so (ms). */
export const REDIS_WAIT_NOTICE_MS = 5000;

type Client = Redis | Cluster;
type Sent = Parameters<Redis['sendCommand']>[0];

interface Watch {
  /** When each command (or pipeline) without an answer yet was sent (host ms). */
  readonly pending: Map<Promise<unknown>, number>;
  timer: NodeJS.Timeout | undefined;
  said: boolean;
}

/**
 * Watches `client`'s commands (and those of the connections BullMQ duplicates
 * from it) and writes `notice` to stderr once, when one of them has waited
 * `afterMs` for its answer.
 */
export function noticeSlowAnswers<T extends Client>(client: T, notice: string, afterMs = REDIS_WAIT_NOTICE_MS, watch = newWatch()): T {
  const send = client.sendCommand.bind(client) as (command: Sent, ...rest: unknown[]) => unknown;
  (client as { sendCommand: (command: Sent, ...rest: unknown[]) => unknown }).sendCommand = (command, ...rest) => {
    if (!watch.said) track(watch, command.promise, notice, afterMs);
    return send(command, ...rest);
  };
  // a pipeline (and MULTI) writes its commands itself: its answer is the exec's
  for (const name of ['pipeline', 'multi'] as const) {
    const make = (client[name] as (...args: unknown[]) => { exec: (...args: unknown[]) => Promise<unknown> }).bind(client);
    (client as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      const batch = make(...args);
      const exec = batch.exec.bind(batch);
      batch.exec = (...execArgs: unknown[]) => {
        const answered = exec(...execArgs);
        if (!watch.said) track(watch, answered, notice, afterMs);
        return answered;
      };
      return batch;
    };
  }
  const duplicate = client.duplicate.bind(client) as (...args: unknown[]) => Client;
  (client as { duplicate: (...args: unknown[]) => Client }).duplicate = (...args) => noticeSlowAnswers(duplicate(...args), notice, afterMs, watch);
  return client;
}

function newWatch(): Watch {
  return { pending: new Map(), timer: undefined, said: false };
}

function track(watch: Watch, answered: Promise<unknown>, notice: string, afterMs: number): void {
  watch.pending.set(answered, Date.now());
  const settled = () => watch.pending.delete(answered);
  answered.then(settled, settled);
  // checked a few times a second while anything is pending; never keeps the process alive
  watch.timer ??= setInterval(() => {
    const now = Date.now();
    for (const sentAt of watch.pending.values()) {
      if (now - sentAt < afterMs) continue;
      watch.said = true;
      process.stderr.write(`${notice}\n`);
      break;
    }
    if (watch.said || watch.pending.size === 0) {
      clearInterval(watch.timer);
      watch.timer = undefined;
    }
  }, Math.min(250, afterMs));
  watch.timer.unref();
}
