/** A private redis-server per test file (never a shared Redis), with clients closed on stop. */
import { Redis } from 'ioredis';
import { freePort, startRedisServer, type RedisServer } from '../../src/dev/redis-server.js';

export { freePort };

export interface TestRedis extends RedisServer {
  client(): Redis;
}

export async function startRedis(extraArgs: string[] = [], opts: { port?: number } = {}): Promise<TestRedis> {
  const server = await startRedisServer(extraArgs, opts);
  const clients: Redis[] = [];
  const stop = server.stop.bind(server);
  return Object.assign(server, {
    client() {
      const c = new Redis({ port: server.port, host: '127.0.0.1' });
      c.on('error', () => undefined);
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await stop();
    },
  });
}
