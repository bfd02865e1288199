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

/** Listens on `port` of 127.0.0.1 (0: any) and closes at once: the port it got, or undefined when taken. */
function bindOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as { port: number }).port;
      srv.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  const port = await bindOnce(0);
  if (port === undefined) throw new Error('no free port on 127.0.0.1');
  return port;
}

/** A free port; for a cluster node, one whose cluster bus port (port + 10000) is free too. */
async function freePortFor(clusterNode: boolean): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (!clusterNode || (port + 10_000 <= 65_535 && (await bindOnce(port + 10_000)) !== undefined)) return port;
  }
}

/** Whether a Redis answers PING at `url` within about a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  const c = new Redis(url, { lazyConnect: true, connectTimeout: 1000, commandTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
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

class ExitedEarly extends Error {}

async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
}

/**
 * Starts `redis-server` from PATH. On a port of its own choosing, a server that
 * exits before answering (its port, or a cluster node's bus port, was taken in
 * the meantime by another process) is started again on another port.
 * @throws Error when it is not installed or does not answer within 10 s.
 */
export async function startRedisServer(extraArgs: string[] = [], opts: { port?: number } = {}): Promise<RedisServer> {
  const clusterNode = extraArgs.includes('--cluster-enabled');
  const dir = mkdtempSync(join(tmpdir(), 'bulk-register-redis-'));
  let port = opts.port ?? (await freePortFor(clusterNode));
  const args = () => ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...extraArgs];
  const url = () => `redis://127.0.0.1:${port}`;
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn('redis-server', args(), { stdio: 'ignore' });
    let failed: Error | undefined;
    child.once('error', (err) => { failed = new Error(`redis-server could not be started (${err.message})`); });
    child.once('exit', (code, signal) => { failed ??= new ExitedEarly(`redis-server on port ${port} exited (${signal ?? `code ${code}`}) before answering`); });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (failed) throw failed;
      if (await redisAnswers(url())) return child;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    throw new Error(`redis-server on port ${port} did not answer within 10 s`);
  };
  let child: ChildProcess;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        child = await launch();
        break;
      } catch (err) {
        if (!(err instanceof ExitedEarly) || opts.port !== undefined || attempt === 5) throw err;
        port = await freePortFor(clusterNode);
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const server: RedisServer = {
    port, url: url(), dir, process: child,
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
