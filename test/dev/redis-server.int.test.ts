/**
 * The private redis-server of the tests, the demo and the bench: a server that
 * exits before answering is reported at once, and a cluster node gets a port
 * whose bus port (port + 10000) is free.
 */
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from '../../src/dev/redis-server.js';

describe('startRedisServer', () => {
  it('says at once, in one sentence, that a server it cannot start exited, after trying other ports', async () => {
    const started = Date.now();
    // an option redis-server refuses: it exits at start, on whatever port
    await expect(startRedisServer(['--no-such-option', 'yes'])).rejects.toThrow(/^redis-server on port \d+ exited \(code 1\) before answering$/);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('does not retry on a port it was given', async () => {
    const held: Server = createServer();
    const port = await new Promise<number>((r) => held.listen(0, '127.0.0.1', () => r((held.address() as { port: number }).port)));
    try {
      await expect(startRedisServer([], { port })).rejects.toThrow(new RegExp(`^redis-server on port ${port} exited`));
    } finally {
      held.close();
    }
  });

  it('starts a cluster node whose bus port is free', async () => {
    const node = await startRedisServer(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf']);
    try {
      const bus = createServer();
      // the node listens on its bus port: nobody else can
      const taken = await new Promise<boolean>((r) => { bus.once('error', () => r(true)); bus.listen(node.port + 10_000, '127.0.0.1', () => bus.close(() => r(false))); });
      expect(taken).toBe(true);
    } finally {
      await node.stop();
    }
  });
});
