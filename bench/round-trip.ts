/**
 * What one limiter call costs a worker process, against a bare round trip:
 * CPU (user + system) and wall time per call, in one process, on a
 * redis-server it starts itself. `node dist/bench/round-trip.js` after a build.
 *
 *   ping      PING: the floor of any round trip through ioredis
 *   permit    sliding-window.lua for a seller with room (a grant)
 *   count     complete-send.lua counting a registered row
 */
import { startRedisServer } from '../src/dev/redis-server.js';
import { loadConfig } from '../src/config.js';
import { createRedis } from '../src/redis.js';
import { SellerLimiter } from '../src/rate-limit/limiter.js';
import { runMain } from './harness.js';

const CALLS = 20_000;
const WARM = 2_000;

async function measure(name: string, call: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < WARM; i++) await call(-1 - i);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await call(i);
  const cpu = process.cpuUsage(cpu0);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3 / CALLS;
  const per = (us: number) => (us / CALLS).toFixed(1).padStart(6);
  process.stdout.write(`${name.padEnd(8)} CPU ${per(cpu.user + cpu.system)} µs/call (user ${per(cpu.user)}, system ${per(cpu.system)}), wall ${wallUs.toFixed(1).padStart(6)} µs/call\n`);
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = createRedis(loadConfig({ ...process.env, REDIS_URL: server.url, REDIS_CLUSTER_NODES: '' }), 'worker');
  try {
    await redis.connect();
    const limiter = new SellerLimiter(redis, { queuePrefix: '{round-trip}', limit: 100, windowMs: 60_000, guardMs: 100, holdMs: 30_000 });
    // 5,000 sellers with room: every permit is a grant, as for many unthrottled sellers
    const seller = (i: number) => `s${(i + 5_000_000) % 5000}`;
    const final = { outcome: 'registered' as const, detail: { status: 'registered', outcome: 'registered', productId: 'P-1234567' }, wantNextPermit: false };
    for (let round = 1; round <= 2; round++) {
      process.stdout.write(`round ${round} (${CALLS} calls each, after ${WARM} to warm up)\n`);
      await measure('ping', () => redis.ping());
      await measure('permit', (i) => limiter.acquire(`${seller(i)}-${round}`, `u:${i}`, `u:${i}#${round}`));
      await measure('count', (i) => limiter.complete({ sellerId: `${seller(i)}-${round}`, uploadId: 'u', row: i, member: `u:${i}`, sendId: `u:${i}#${round}` }, final, 600));
    }
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

runMain('round-trip', main);
