/**
 * How many jobs a worker process runs at once when WORKER_CONCURRENCY is `auto`:
 * enough requests in flight that the API's answer time, not the pool, bounds
 * the rate, and no more.
 *
 * A process's slot is busy for one answer time per row. A process wants one
 * slot for the first 50 ms of answer time and one more per MS_PER_SLOT (8 ms)
 * beyond, between 1 and AUTO_MAX: at 2-25 ms answers (up to 57 ms as a busy
 * process sees them) that is 1 slot (more only adds in-process queueing, which
 * delays sends the limiter has planned); at 200 ms, 19; at 500 ms and more, 57-64.
 * In the bench's capacity scenario (200 sellers x 50 rows, 150-250 ms answers,
 * 16 processes on 2 cores), interleaved in one sitting: one slot per 8 ms
 * carried 1,171-1,188 rows/s, one per 10 ms 994-1,007 and one per 12.5 ms
 * 858-881, each with fewer worker and Redis CPU per row the more it had in
 * flight (more answers and completions handled per turn of the event loop and
 * per socket write); first registration p99 819-833 ms against 754-914, and the
 * 7-row seller arriving late done in 567-615 ms against 304-429 (its requests
 * wait behind more in-process work). (One slot per 25 ms held the scenario to
 * about 600 rows/s, where bare BullMQ at a fixed 18 jobs per process carried 1,000.)
 *
 * Slots are added only while every slot has a request in flight and the host has
 * CPU to spare (HostCpu). Once the CPU is full, answers come later because the
 * processes (and, on a shared host, the API or Redis) wait for it; counted as answer
 * time, that called for more slots, which queued more work and made answers later
 * still; and at the end of a burst, the CPU idle again while the average still held
 * those late answers, the processes took the slots it called for. With a bound of 64
 * and neither check, the bench's capacity scenario (CPU-bound near 128 in flight)
 * climbed to 340-800 in flight for no more rows/s, and each seller's first
 * registration came 1.5-2x later.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** The most slots: the HTTP client's sockets per process (registration/client.ts); more would only queue there. */
export const AUTO_MAX = 64;
/** Answer time per slot beyond the first (ms); see above for how it was chosen. */
export const MS_PER_SLOT = 8;
/** Answer time (ms) that one slot covers on its own: below it, more slots only queue in the process. */
export const FIRST_SLOT_MS = 50;
/** Below this share of idle CPU on the host, a process adds no slots. */
export const MIN_IDLE_TO_GROW = 0.1;

/** What `slots` slots stand for (ms of answer time). */
const standsFor = (slots: number) => FIRST_SLOT_MS + (slots - 1) * MS_PER_SLOT;

/** Slots for an answer time (ms); pure. */
export function concurrencyFor(answerMs: number): number {
  return Math.max(1, Math.min(AUTO_MAX, 1 + Math.floor((answerMs - FIRST_SLOT_MS) / MS_PER_SLOT)));
}

/**
 * A process gives slots back only once the answer time is below this share of what
 * its slots stand for (standsFor). The average of a steady API wanders
 * around a slot boundary (150-250 ms answers average 200 +- 10 ms, across
 * boundaries 8 ms apart): without the margin a process went 8 -> 7 -> 8 several times a second,
 * and each slot taken back was filled by a fetch of its own (BullMQ's moveToActive)
 * whose row then asked for its permit in a call of its own, instead of both coming
 * with the finishing row's write: in the bench's capacity scenario, 1 row in 10.
 */
export const SHRINK_BELOW = 0.85;

/**
 * The slots a process runs next (pure): those the answer time calls for, but no more
 * than now unless every slot has a request in flight (more work is waiting), the
 * host has CPU to spare and answers came clearly slower, and no fewer unless they
 * came clearly faster (SHRINK_BELOW both ways).
 */
export function nextConcurrency(current: number, answerMs: number, load: { allBusy: boolean; hostIdle: number }): number {
  const wanted = concurrencyFor(answerMs);
  // and, as for giving back, only clearly past what the slots stand for (one slot is 8 ms:
  // a steady API's average crosses a boundary often)
  if (wanted > current) return load.allBusy && load.hostIdle >= MIN_IDLE_TO_GROW && answerMs * SHRINK_BELOW > standsFor(current) ? wanted : current;
  if (wanted < current && answerMs < standsFor(current) * SHRINK_BELOW) return wanted;
  return current;
}

/** A moving average of answer times (ms): each sample moves it a fifth of the way, the first sets it. */
export class AnswerTime {
  private avg: number | undefined;
  observe(ms: number): number {
    this.avg = this.avg === undefined ? ms : this.avg * 0.8 + ms * 0.2;
    return this.avg;
  }
  get ms(): number | undefined {
    return this.avg;
  }
}

/** The host's idle share of CPU time (0-1) between calls of sample(), over all its cores. */
export class HostCpu {
  private last = HostCpu.read();
  private idleShare = 1;

  private static read(): { idle: number; total: number } {
    // Linux: the first line of /proc/stat holds the sums over all cores (os.cpus() reads
    // each core's line and /proc/cpuinfo as well: 1.2 % of a worker's CPU at capacity)
    const fromProc = HostCpu.readProcStat();
    if (fromProc) return fromProc;
    let idle = 0;
    let total = 0;
    for (const { times } of cpus()) {
      idle += times.idle;
      total += times.user + times.nice + times.sys + times.idle + times.irq;
    }
    return { idle, total };
  }

  private static procStat = true;
  private static readProcStat(): { idle: number; total: number } | undefined {
    if (!HostCpu.procStat) return undefined;
    try {
      const line = readFileSync('/proc/stat', 'latin1');
      // cpu  user nice system idle iowait irq softirq ... (in clock ticks)
      const m = /^cpu\s+(\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(line);
      if (!m) throw new Error('no cpu line');
      const [user, nice, sys, idle, iowait, irq, softirq] = m.slice(1).map(Number) as [number, number, number, number, number, number, number];
      return { idle: idle + iowait, total: user + nice + sys + idle + iowait + irq + softirq };
    } catch {
      HostCpu.procStat = false;
      return undefined;
    }
  }

  /** Takes in the period since the last call. */
  sample(): number {
    const now = HostCpu.read();
    const total = now.total - this.last.total;
    if (total > 0) this.idleShare = (now.idle - this.last.idle) / total;
    this.last = now;
    return this.idleShare;
  }

  get idle(): number {
    return this.idleShare;
  }
}

/**
 * A process's slots under WORKER_CONCURRENCY=auto: it times each API request
 * (`track`), samples the host's CPU every TICK_MS, and calls `onChange` with the
 * new number of slots.
 *
 * A request still unanswered after t ms shows the answer time is at least t: on a
 * fresh pool in front of a slow API, every slot is busy long before the first
 * answer, and until its first answer the process grows on that, instead of one
 * job at a time until then. Requests that got no answer (a timeout, a refused
 * connection) are no answer time: an API that hangs does not earn more requests.
 */
export class AdaptiveConcurrency {
  static readonly TICK_MS = 250;
  private readonly answers = new AnswerTime();
  /** start time (performance.now()) of each request in flight */
  private readonly started = new Map<number, number>();
  private nextId = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private current: number,
    private readonly onChange: (slots: number, why: { answerMs: number; hostIdle: number }) => void,
    private readonly cpu: Pick<HostCpu, 'sample' | 'idle'> = new HostCpu(),
  ) {
    this.timer = setInterval(() => this.tick(), AdaptiveConcurrency.TICK_MS);
    this.timer.unref();
  }

  get slots(): number {
    return this.current;
  }

  /** Runs `request`, timing it as an answer unless `answered` says it got none. */
  async track<T>(request: () => Promise<T>, answered: (result: T) => boolean = () => true): Promise<T> {
    const id = this.nextId++;
    const started = performance.now();
    this.started.set(id, started);
    let result: T | undefined;
    try {
      result = await request();
      return result;
    } finally {
      const allBusy = this.started.size >= this.current;
      this.started.delete(id);
      if (result !== undefined && answered(result)) this.apply(this.answers.observe(performance.now() - started), allBusy);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    this.cpu.sample();
    if (this.answers.ms !== undefined || this.started.size < this.current) return;
    this.apply(performance.now() - Math.min(...this.started.values()), true);
  }

  private apply(answerMs: number, allBusy: boolean): void {
    const next = nextConcurrency(this.current, answerMs, { allBusy, hostIdle: this.cpu.idle });
    if (next === this.current) return;
    this.current = next;
    this.onChange(next, { answerMs: Math.round(answerMs), hostIdle: this.cpu.idle });
  }
}
