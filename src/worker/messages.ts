/** IPC between the pool supervisor and its worker processes. */
import type { Outcome } from '../rate-limit/limiter.js';

export type SupervisorMessage = { type: 'shutdown' };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'outcome'; outcome: Outcome | 'tooMany' | 'delayed' };
