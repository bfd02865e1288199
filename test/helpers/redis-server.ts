/** Starts a private redis-server on a free port in a temporary directory (never a shared Redis). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface TestRedis {
  port: number;
  url: string;
  dir: string;
  process: ChildProcess;
  client(): Redis;
  stop(): Promise<void>;
  /** Stops and starts again on the same port and directory (AOF keeps the data). */
  restart(): Promise<void>;
}

async function waitReady(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => undefined);
    try {
      await c.connect();
      if ((await c.ping()) === 'PONG') return;
    } catch {
      // not yet
    } finally {
      c.disconnect();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not start`);
}

export async function startRedis(extraArgs: string[] = []): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bulk-register-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...extraArgs];
  const clients: Redis[] = [];
  const launch = () => spawn('redis-server', args, { stdio: 'ignore' });
  const handle: TestRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    process: launch(),
    client() {
      const c = new Redis({ port, host: '127.0.0.1' });
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await stopProcess(handle.process);
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stopProcess(handle.process);
      handle.process = launch();
      await waitReady(port);
    },
  };
  await waitReady(port);
  return handle;
}

async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
}
