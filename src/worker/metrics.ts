/**
 * Prometheus metrics of the pool (prom-client), served by the supervisor on
 * METRICS_PORT and aggregated over all worker processes from their event
 * batches; /healthz says whether Redis answers and the workers are running.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { ChildMessage } from './messages.js';

export class PoolMetrics {
  readonly registry = new Registry();
  private readonly registrations = new Counter({ name: 'bulk_register_registrations_total', help: 'Rows finished, by outcome', labelNames: ['outcome'] as const, registers: [this.registry] });
  private readonly tooMany = new Counter({ name: 'bulk_register_api_429_total', help: '429 answers from the registration API', registers: [this.registry] });
  private readonly permits = new Counter({ name: 'bulk_register_limiter_calls_total', help: 'Permit requests to the limiter', registers: [this.registry] });
  private readonly ahead = new Counter({ name: 'bulk_register_permits_ahead_total', help: 'Permits asked in the write that finished the row before (no round trip of their own)', registers: [this.registry] });
  private readonly waits = new Histogram({
    name: 'bulk_register_limiter_wait_seconds', help: 'How long jobs were delayed for a permit (or a Retry-After)',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300], registers: [this.registry],
  });
  private readonly apiAvailable = new Gauge({ name: 'bulk_register_api_available', help: '1 while the registration API counts as available, 0 during an outage (the pool holds its rows)', registers: [this.registry] });
  private readonly up = new Gauge({ name: 'bulk_register_worker_up', help: '1 while the worker process in this slot runs', labelNames: ['slot'] as const, registers: [this.registry] });

  /** @param queues the queue shards now (their counts are summed: the shards show as one queue) */
  constructor(queues: (() => Promise<Queue[]>) | undefined) {
    if (queues) {
      new Gauge({
        name: 'bulk_register_queue_jobs', help: 'Jobs in the queue by state, over every shard', labelNames: ['state'] as const, registers: [this.registry],
        async collect() {
          const sum: Record<string, number> = {};
          for (const queue of await queues()) {
            const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
            for (const [state, n] of Object.entries(counts)) sum[state] = (sum[state] ?? 0) + n;
          }
          for (const [state, n] of Object.entries(sum)) this.set({ state }, n);
        },
      });
    }
  }

  onMessage(message: ChildMessage): void {
    if (message.type !== 'events') return;
    for (const [event, , n] of message.counts) {
      if (event === 'registered' || event === 'duplicate' || event === 'failed' || event === 'cancelled') this.registrations.inc({ outcome: event }, n);
      else if (event === 'tooMany') this.tooMany.inc(n);
      else if (event === 'permit') this.permits.inc(n);
      else if (event === 'permitAhead') this.ahead.inc(n);
    }
    for (const ms of message.waitsMs) this.waits.observe(ms / 1000);
  }

  /** Whether the registration API counts as available (steering/outage.ts). */
  api(available: boolean): void {
    this.apiAvailable.set(available ? 1 : 0);
  }

  slot(slot: number, up: boolean): void {
    this.up.set({ slot: String(slot) }, up ? 1 : 0);
  }
}

/** Serves /metrics and /healthz. Resolves with the bound port, or undefined if it cannot listen (logged). */
export async function serveMetrics(
  metrics: PoolMetrics, port: number, health: () => Promise<{ redis: boolean; workers: number; expected: number }>, log: Logger,
): Promise<{ port: number; close: () => Promise<void> } | undefined> {
  const server = http.createServer(async (req, res) => {
    try {
      if (req.url === '/metrics') {
        const body = await metrics.registry.metrics();
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
        res.end(body);
      } else if (req.url === '/healthz') {
        const h = await health();
        const ok = h.redis && h.workers > 0;
        res.writeHead(ok ? 200 : 503, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ ok, redis: h.redis ? 'up' : 'down', workers: h.workers, expected: h.expected }));
      } else {
        res.writeHead(404).end();
      }
    } catch (err) {
      res.writeHead(500).end(String((err as Error).message));
    }
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '0.0.0.0', () => resolve());
    });
  } catch (err) {
    log.warn({ err, port }, 'metrics endpoint not started (port in use?); the pool runs without it');
    return undefined;
  }
  const bound = (server.address() as AddressInfo).port;
  log.info({ port: bound }, 'metrics listening on /metrics and /healthz');
  return { port: bound, close: () => new Promise((r) => server.close(() => r())) };
}
