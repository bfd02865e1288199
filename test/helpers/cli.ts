/** Runs the built CLI (dist/, built by `npm test`) as real OS processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';

export const BIN = join(PACKAGE_ROOT, 'bin', 'bulk-register.js');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_PRETTY: '0', LOG_LEVEL: 'info', METRICS_PORT: '0' };
  return { ...env, ...extra };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: PACKAGE_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bulk-register ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    // 'close', not 'exit': a process can exit before its piped output has been read, and a
    // loaded host (a hundred uploads at once) then handed back an empty stdout
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A long-running CLI process (workers, mock-api) whose output is collected. */
export interface Running {
  child: ChildProcess;
  output: () => string;
  /** Resolves when a line matching `pattern` has been printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Resolves once a pool has printed `processes` lines "worker process ready" (each process's, once it takes jobs). */
export function poolReady(pool: Running, processes: number, timeoutMs = 30_000): Promise<void> {
  return pool.waitFor(new RegExp(Array(processes).fill('worker process ready').join('[\\s\\S]*')), timeoutMs);
}

export function startCli(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [BIN, ...args], { env, cwd: PACKAGE_ROOT, detached: false });
  let out = '';
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) if (w.pattern.test(out)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  // once its output is read to the end ('close'), as runCli waits: at 'exit' the last lines
  // may still be in the pipe. A process that leaves children holding the pipe (a pool whose
  // worker outlives its supervisor) would keep 'close' back, so 'exit' and 2 s will do too
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => {
    const grace = setTimeout(() => r(code), 2000);
    child.once('close', () => { clearTimeout(grace); r(code); });
  }));
  return {
    child,
    output: () => out,
    waitFor(pattern, timeoutMs = 30_000) {
      if (pattern.test(out)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}\n${out.slice(-3000)}`)), timeoutMs);
        waiters.push({ pattern, resolve: () => { clearTimeout(t); resolve(); } });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}
