/** IPC between the pool supervisor and its worker processes. */
import type { ProcessorEvent } from './processor.js';

export type SupervisorMessage = { type: 'shutdown' };

export type ChildMessage =
  | { type: 'ready' }
  /** What the processor saw since the last batch: counts by event and seller, and each delay's wait (ms). */
  | { type: 'events'; counts: Array<[ProcessorEvent, string, number]>; waitsMs: number[]; concurrency?: number };
