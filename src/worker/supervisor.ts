/**
 * The pool supervisor: starts N worker processes, restarts any that dies, and on
 * stop() asks them all to finish their jobs in hand, waits up to a bounded
 * timeout, kills what is left, and resolves with no process left behind.
 *
 * The processes start a few at a time: as many at once as the host has cores,
 * then one more each time one of them says it is ready (or STAGGER_MS after the
 * last start, should none say so: Redis away). Started all at once, 16 processes
 * loading their modules on 2 cores were each ready only about 8 s later, all
 * together, and no row was taken before; a few at a time, the first ones take
 * rows within a second or two while the rest start.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import { STEERING_RELAYED_ENV, SteeringRelay } from '../steering/steer-relay.js';
import type { ChildMessage, SupervisorMessage } from './messages.js';

export const WORKER_ENTRY = fileURLToPath(new URL('./worker-main.js', import.meta.url));
/** The next process starts at most this long after the one before it, ready or not (ms). */
export const STAGGER_MS = 2000;

export interface PoolOptions {
  processes: number;
  /** Environment for the children (config travels as environment variables). */
  env: NodeJS.ProcessEnv;
  shutdownTimeoutMs: number;
  log: Logger;
  entry?: string;
  /** Node flags added to the children's own (the bench's profiling: `--cpu-prof`). */
  execArgv?: string[];
  onMessage?: (slot: number, message: ChildMessage) => void;
  /** Called when a slot's process (re)starts or exits: for metrics and /healthz. */
  onSlotChange?: (slot: number, up: boolean) => void;
  /** Read the steering hash once for the pool and send it to the processes when it changes (steering/steer-relay.ts). */
  steering?: { redis: RedisClient; ns: string };
  /** How many processes start at once (default: the host's cores); each next one when one is ready. */
  startTogether?: number;
  /** The next process starts at most this long after the one before it, ready or not (default STAGGER_MS). */
  staggerMs?: number;
}

export class WorkerPool {
  private readonly children = new Map<number, ChildProcess>();
  private readonly restarts = new Map<number, number[]>();
  /** Slots whose process has not been started yet (the start goes a few at a time). */
  private readonly unstarted: number[] = [];
  private staggerTimer: NodeJS.Timeout | undefined;
  /** Processes that said they are ready and have not exited since. */
  private readonly readySlots = new Set<number>();
  private stopping = false;
  private readonly relay: SteeringRelay | undefined;
  restartCount = 0;

  constructor(private readonly opts: PoolOptions) {
    if (opts.steering) this.relay = new SteeringRelay(opts.steering.redis, opts.steering.ns, (m) => this.broadcast(m));
  }

  start(): void {
    this.relay?.start();
    for (let slot = 0; slot < this.opts.processes; slot++) this.unstarted.push(slot);
    const together = Math.max(1, Math.min(this.opts.processes, this.opts.startTogether ?? availableParallelism()));
    for (let i = 0; i < together; i++) this.startNext();
    this.opts.log.info({ processes: this.opts.processes, startingTogether: together }, 'worker pool started');
  }

  /** Starts the next slot of the initial start, if any is left; the one after it follows a ready process, or STAGGER_MS. */
  private startNext(): void {
    clearTimeout(this.staggerTimer);
    const slot = this.unstarted.shift();
    if (slot === undefined || this.stopping) return;
    this.spawn(slot);
    if (this.unstarted.length > 0) this.staggerTimer = setTimeout(() => this.startNext(), this.opts.staggerMs ?? STAGGER_MS).unref();
  }

  get pids(): number[] {
    return [...this.children.values()].map((c) => c.pid!).filter(Boolean);
  }

  get running(): number {
    return this.children.size;
  }

  /** Processes that said they are ready (connected, their BullMQ workers listening) and are still running. */
  get ready(): number {
    return this.readySlots.size;
  }

  private spawn(slot: number): void {
    const child = fork(this.opts.entry ?? WORKER_ENTRY, [], {
      env: this.relay ? { ...this.opts.env, [STEERING_RELAYED_ENV]: '1' } : this.opts.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // A worker holds a few small jobs at a time: a small young generation keeps 16
      // of them light (about 15 MB less each) at the cost of more, shorter scavenges,
      // and an old generation grown by a fifth past what the last full GC kept (V8
      // otherwise grows it up to 4x while GCs are fast) keeps each at 90-93 MB at
      // capacity, where V8's defaults reach 120-127 MB. V8's --optimize-for-size kept
      // them as light, but its size-over-speed code cost a worker 9-17 % more CPU per
      // row: bench capacity, interleaved 3 and 3 runs, 616-751 rows/s and 1,950-2,354
      // µs of worker CPU per row with it, 673-818 and 1,713-2,016 with this.
      execArgv: ['--max-semi-space-size=2', '--heap-growing-percent=20', ...(this.opts.execArgv ?? [])],
    });
    this.children.set(slot, child);
    this.opts.onSlotChange?.(slot, true);
    let saidReady = false;
    child.on('message', (m: ChildMessage) => {
      this.opts.onMessage?.(slot, m);
      if (m.type === 'ready' && !saidReady) {
        saidReady = true;
        this.readySlots.add(slot);
        this.startNext();
      }
    });
    child.on('error', (err) => this.opts.log.error({ err, slot }, 'worker process error'));
    child.on('exit', (code, signal) => {
      if (this.children.get(slot) === child) {
        this.children.delete(slot);
        this.readySlots.delete(slot);
      }
      this.opts.onSlotChange?.(slot, false);
      if (this.stopping) return;
      // Restart at once, but back off if this slot keeps dying (e.g. a bad configuration).
      const now = Date.now();
      const recent = (this.restarts.get(slot) ?? []).filter((t) => now - t < 60_000);
      recent.push(now);
      this.restarts.set(slot, recent);
      const delayMs = recent.length > 3 ? Math.min(30_000, 1000 * 2 ** (recent.length - 3)) : 0;
      this.restartCount++;
      this.opts.log.warn({ slot, pid: child.pid, code, signal, restartInMs: delayMs }, 'worker process died; restarting it');
      setTimeout(() => {
        if (!this.stopping) this.spawn(slot);
      }, delayMs).unref();
    });
  }

  /** Sends every running process the message; one that cannot take it now reads the hash itself later. */
  private broadcast(message: SupervisorMessage): void {
    for (const c of this.children.values()) {
      if (c.connected) c.send(message, (err) => void err);
    }
  }

  /** Asks every process to finish and exit; kills any still there after the timeout. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.staggerTimer);
    this.unstarted.length = 0;
    this.relay?.stop();
    const alive = [...this.children.values()];
    const exited = alive.map((c) => new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) resolve();
      else c.once('exit', () => resolve());
    }));
    for (const c of alive) {
      try {
        if (c.connected) c.send({ type: 'shutdown' } satisfies SupervisorMessage);
        else c.kill('SIGTERM');
      } catch {
        c.kill('SIGTERM');
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.opts.shutdownTimeoutMs + 1000);
    });
    const result = await Promise.race([Promise.all(exited), timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      for (const c of alive) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(exited);
      this.opts.log.warn('some worker processes did not stop in time and were killed; their jobs will be re-run');
    }
  }
}
