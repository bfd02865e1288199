/**
 * A private redis-server on a free port in a temporary directory, for the demo,
 * the bench and the tests (which must never write a Redis they did not start).
 */
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

/** Whether a Redis answers PING at `url` within about a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  const c = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let wantsPassword = false;
  // a server that wants a password (and got none) still answers
  c.on('error', (err: Error) => { wantsPassword ||= /NOAUTH|WRONGPASS/.test(err.message); });
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } catch (err) {
    return wantsPassword || /NOAUTH|WRONGPASS/.test((err as Error).message);
  } finally {
    c.disconnect();
  }
}

export interface RedisServer {
  port: number;
  url: string;
  dir: string;
  process: ChildProcess;
  stop(): Promise<void>;
  /** Stops and starts again on the same port and directory (with AOF, the data survives). */
  restart(): Promise<void>;
}

async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
}

/**
 * Starts `redis-server` from PATH.
 * @throws Error when it is not installed or does not answer within 10 s.
 */
export async function startRedisServer(extraArgs: string[] = [], opts: { port?: number } = {}): Promise<RedisServer> {
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'bulk-register-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...extraArgs];
  const url = `redis://127.0.0.1:${port}`;
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    let failed: Error | undefined;
    child.once('error', (err) => { failed = err; });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (failed) throw new Error(`redis-server could not be started (${failed.message})`);
      if (await redisAnswers(url)) return child;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    throw new Error(`redis-server on port ${port} did not answer within 10 s`);
  };
  let child: ChildProcess;
  try {
    child = await launch();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const server: RedisServer = {
    port, url, dir, process: child,
    async stop() {
      await stopProcess(server.process);
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stopProcess(server.process);
      server.process = await launch();
    },
  };
  return server;
}
