/** A private Redis + mock API (+ pools) for pipeline-level tests with real processes. */
import { freePort, startRedis, type TestRedis } from './redis-server.js';
import { baseEnv, startCli, type Running } from './cli.js';

export interface Stage {
  redis: TestRedis;
  api: Running;
  apiUrl: string;
  env: NodeJS.ProcessEnv;
  pools: Running[];
  stats(): Promise<{ totals: Record<string, number>; sellers: Record<string, Record<string, number> & { times?: number[] }> }>;
  pool(processes: number, extraEnv?: Record<string, string>): Running;
  /**
   * Stops every pool still running (SIGTERM, then SIGKILL after 15 s): after a case, so
   * that one whose assertion failed before its own stop leaves no pool working the next.
   */
  stopPools(): Promise<void>;
  stop(): Promise<void>;
}

export async function startStage(env: Record<string, string>, apiEnv: Record<string, string> = {}, redisArgs: string[] = []): Promise<Stage> {
  const redis = await startRedis(redisArgs);
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const fullEnv = baseEnv({ REDIS_URL: redis.url, REGISTRATION_API_URL: apiUrl, SHUTDOWN_TIMEOUT_MS: '10000', ...env });
  const api = startCli(['mock-api', '--port', String(port)], { ...fullEnv, ...apiEnv });
  await api.waitFor(/mock registration API listening/);
  const pools: Running[] = [];
  return {
    redis, api, apiUrl, env: fullEnv, pools,
    async stats() {
      return (await fetch(`${apiUrl}/_stats?times=1`)).json() as never;
    },
    pool(processes, extraEnv = {}) {
      const p = startCli(['workers', '--processes', String(processes)], { ...fullEnv, ...extraEnv });
      pools.push(p);
      return p;
    },
    async stopPools() {
      await Promise.all(pools.splice(0).map(async (p) => {
        const killer = setTimeout(() => void p.stop('SIGKILL'), 15_000);
        await p.stop('SIGTERM');
        clearTimeout(killer);
      }));
    },
    async stop() {
      for (const p of pools) await p.stop('SIGKILL');
      await api.stop();
      await redis.stop();
    },
  };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function workerPids(output: string): number[] {
  return [...new Set([...output.matchAll(/"name":"worker","pid":(\d+)/g)].map((m) => Number(m[1])))];
}

/** Smallest gap between arrivals i and i + limit at the API (its own clock). */
export function minApiGap(times: number[], limit: number): number {
  const t = [...times].sort((a, b) => a - b);
  let min = Infinity;
  for (let i = 0; i + limit < t.length; i++) min = Math.min(min, t[i + limit]! - t[i]!);
  return min;
}
