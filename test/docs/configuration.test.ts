/**
 * The config schema (src/config.ts), docs/configuration.md and .env.example
 * name the same variables with the same defaults. The schema object is not
 * exported, so its keys and defaults are read from the source text of the
 * `const schema = z.object({ ... })` block. Pure: reads three files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

const read = (path: string) => readFileSync(join(PACKAGE_ROOT, path), 'utf8');

/** Variables read outside the schema: the stand-ins', the demo's, the bench's and the tests'. */
const NOT_IN_SCHEMA = [
  'MOCK_LATENCY_MS', 'MOCK_PATH_LATENCY_MS', 'MOCK_FAIL_RATE', 'MOCK_DROP_RATE', 'MOCK_HANG_RATE', 'MOCK_INVALID_CATEGORIES', 'MOCK_FAIL_CATEGORIES', 'MOCK_LIMITS',
  'MOCK_MARKETPLACE_CLIENTS', 'MOCK_TOKEN_LIFETIME_MS', 'MOCK_API_HOST',
  'DEMO_ADAPTER', 'DEMO_HOLD_S', 'DEMO_LOG_LEVEL',
  'BENCH_SCENARIOS', 'BENCH_ONLY', 'BENCH_ROUNDS', 'BENCH_ON_CLUSTER', 'BENCH_CLUSTER_ROUNDS', 'BENCH_CONCURRENCY', 'BENCH_CAPACITY_PEERS', 'BENCH_CAPACITY_REPEATS', 'BENCH_FIXED_RUNS', 'BENCH_PRODUCER_NICE',
  'BENCH_QUEUE_SHARDS', 'BENCH_DEBUG', 'BENCH_DEBUG_SLOWLOG', 'BENCH_WORKER_FLAGS', 'BENCH_NO_WRITE', 'BENCH_LIMITER', 'BENCH_QUEUE_LIMITER', 'ROW_COST_ROUNDS', 'ROW_COST_KINDS', 'ROW_COST_COMMANDS', 'ROW_COST_CLUSTER',
  'SCRIPT_COST_LUA', 'SCRIPT_COST_ROUNDS', 'SCRIPT_COST_ANNOUNCING', 'SCRIPT_COST_DESCRIPTION',
  'COLD_ROUNDS', 'COLD_RUNS', 'COLD_FLAGS', 'COLD_RT', 'COLD_ONLY', 'COLD_PER_PROCESS', 'COLD_PREWARM', 'CHAOS_DURATION_S', 'CHAOS_MARKETPLACE', 'CHAOS_REDIS', 'CONSOLE_LOAD_UPLOADS', 'CONSOLE_LOAD_ROWS',
  'CHROMIUM_PATH', 'HA_RUNS', 'HA_CLUSTER_RUNS', 'HA_SELLERS', 'HA_PROCESSES', 'HA_CONCURRENCY', 'HA_FREEZE_MS', 'CLOCK_OFFSET_MS',
];

/** Each schema key with its default as .env.example would write it ('' for none, [] or ''). */
function schemaDefaults(source: string): Map<string, string> {
  const block = /const schema = z\.object\(\{\n([\s\S]*?)\n\}\);/.exec(source)?.[1];
  if (!block) throw new Error('src/config.ts: no `const schema = z.object({ ... });` block');
  const entries = new Map<string, string>();
  // a key starts a line at two spaces' indent; its definition runs to the next key
  const parts = block.split(/^ {2}(?=[A-Z][A-Z0-9_]*:)/m).filter((p) => /^[A-Z]/.test(p));
  for (const part of parts) {
    const key = part.slice(0, part.indexOf(':'));
    const raw = /\.default\(([^()]*)\)/.exec(part)?.[1]?.trim();
    const value = raw === undefined || raw === '[]' ? '' : /^'.*'$/.test(raw) ? raw.slice(1, -1) : raw.replace(/_/g, '');
    entries.set(key, value);
  }
  return entries;
}

/** `| NAME | default | meaning |` rows of every table in the page. */
function documented(page: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const m of page.matchAll(/^\| ([A-Z][A-Z0-9_]+) \| ([^|]*?) \|/gm)) rows.set(m[1]!, m[2]!);
  return rows;
}

function envExample(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const m of text.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)) vars.set(m[1]!, m[2]!.trim());
  return vars;
}

/** Every file's text under `dir` (skipping node_modules and dist). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') return [];
    return statSync(path).isDirectory() ? sources(path) : /\.(ts|mjs|js|sh)$/.test(name) ? [readFileSync(path, 'utf8')] : [];
  });
}

/** Where a documented default disagrees with `values` ('' documented as "(empty)..."), or a variable is missing. */
function mismatches(values: Map<string, string>, table: Map<string, string>, where: string): string[] {
  return [...values].flatMap(([key, value]) => {
    const cell = table.get(key);
    if (cell === undefined) return [`${key}: not in ${where}`];
    const ok = value === '' ? cell.startsWith('(empty)') : cell === value;
    return ok ? [] : [`${key}: ${where} says ${JSON.stringify(cell)}, expected ${value === '' ? '(empty)' : JSON.stringify(value)}`];
  });
}

const schema = schemaDefaults(read('src/config.ts'));
const docs = documented(read('docs/configuration.md'));
const example = envExample(read('.env.example'));

describe('configuration: schema, docs/configuration.md and .env.example', () => {
  it('reads the schema block', () => {
    expect(schema.size).toBeGreaterThan(30);
    expect(schema.get('REDIS_URL')).toBe(loadConfig({}).redisUrl);
    expect(schema.get('RATE_LIMIT_WINDOW_MS')).toBe('60000');
    expect(schema.get('QUEUE_SHARDS')).toBe('');
  });

  it('documents every schema variable, with its default', () => {
    expect(mismatches(schema, docs, 'docs/configuration.md')).toEqual([]);
  });

  it('lists every schema variable in .env.example, with its default', () => {
    const wrong = [...schema].filter(([key, value]) => example.get(key) !== value).map(([key, value]) =>
      example.has(key) ? `${key}: .env.example has ${JSON.stringify(example.get(key))}, the schema ${JSON.stringify(value)}` : `${key}: not in .env.example`);
    expect(wrong).toEqual([]);
  });

  it('documents nothing that is neither in the schema nor a listed exception', () => {
    const unknown = [...docs.keys()].filter((k) => !schema.has(k) && !NOT_IN_SCHEMA.includes(k));
    expect(unknown).toEqual([]);
    const undocumented = NOT_IN_SCHEMA.filter((k) => !docs.has(k));
    expect(undocumented).toEqual([]);
  });

  it('has nothing in .env.example that the docs do not describe, with the same default', () => {
    expect(mismatches(example, docs, 'docs/configuration.md')).toEqual([]);
  });

  it('lists only exceptions some code still reads', () => {
    const code = ['src', 'bench', 'scripts', 'test'].flatMap((d) => sources(join(PACKAGE_ROOT, d))).join('\n');
    const stale = NOT_IN_SCHEMA.filter((k) => !new RegExp(`\\b${k}\\b`).test(code));
    expect(stale).toEqual([]);
  });

  it('.env.example as written is a valid configuration', () => {
    expect(() => loadConfig(Object.fromEntries(example))).not.toThrow();
  });
});
