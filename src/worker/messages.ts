/** IPC between the pool supervisor and its worker processes. */
import type { ProcessorEvent } from './processor.js';
import type { SteeringMessage } from '../steering/steer-relay.js';

/** `steering`: the steering hash, sent when it changed (steering/steer-relay.ts). */
export type SupervisorMessage = { type: 'shutdown' } | SteeringMessage;

export type ChildMessage =
  | { type: 'ready' }
  /** What the processor saw since the last batch: counts by event and seller, and each delay's wait (ms). */
  | { type: 'events'; counts: Array<[ProcessorEvent, string, number]>; waitsMs: number[]; concurrency?: number };
