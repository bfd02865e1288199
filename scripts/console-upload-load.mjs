#!/usr/bin/env node
// Many sellers' sheets uploaded through the console at once: CONSOLE_LOAD_UPLOADS sheets
// (default 200) of CONSOLE_LOAD_ROWS rows each (default 40), one seller each, posted
// together to `POST /api/uploads` with the operator's token, as many browsers would. The
// console runs on a private redis-server, with no worker pool (only its intake is
// measured). Prints how the posts were answered, how long they took (p50, p99, max), the
// console process's peak RSS, and whether every upload enqueued all its rows; exit 1 when
// one did not. `npm run build` first.
//   node scripts/console-upload-load.mjs
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const dist = (p) => import(join(root, 'dist', 'src', p));
const { startRedisServer, freePort } = await dist('dev/redis-server.js');
const { buildProductSheet, sampleProducts } = await dist('fixtures/build-sheet.js');
const { peakRssMb } = await import(join(root, 'dist', 'bench', 'harness.js'));

const UPLOADS = Number(process.env.CONSOLE_LOAD_UPLOADS ?? 200) || 200;
const ROWS = Number(process.env.CONSOLE_LOAD_ROWS ?? 40) || 40;
const TOKEN = 'console-load-operator-0123456789';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const redis = await startRedisServer();
let consoleProcess;
try {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, LOG_PRETTY: '0', REDIS_URL: redis.url, QUEUE_PREFIX: '{console-load}',
    CONSOLE_OPERATOR_TOKEN: TOKEN, CONSOLE_SECRET: 'console-load-secret-0123456789abcdef',
  };
  consoleProcess = spawn(process.execPath, [join(root, 'bin', 'bulk-register.js'), 'console', '--port', String(port)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  consoleProcess.stdout.on('data', (d) => (out += d));
  consoleProcess.stderr.on('data', (d) => (out += d));
  while (!/console listening/.test(out)) {
    if (consoleProcess.exitCode !== null) throw new Error(`the console exited: ${out.trim()}`);
    await sleep(100);
  }

  const sheets = await Promise.all(Array.from({ length: UPLOADS }, (_, i) => buildProductSheet(sampleProducts(`LOAD${i}`, ROWS))));
  const t0 = Date.now();
  const answers = await Promise.all(sheets.map(async (sheet, i) => {
    const form = new FormData();
    form.append('seller', `load-${i}`);
    form.append('file', new Blob([sheet]), `load-${i}.xlsx`);
    const started = Date.now();
    try {
      const res = await fetch(`${base}/api/uploads`, { method: 'POST', body: form, headers: { authorization: `Bearer ${TOKEN}`, origin: base } });
      const body = await res.text();
      return { status: res.status, ms: Date.now() - started, enqueued: res.status === 200 ? JSON.parse(body).enqueued : undefined, body };
    } catch (err) {
      return { status: 'no answer', ms: Date.now() - started, body: String(err) };
    }
  }));
  const wallMs = Date.now() - t0;
  const peak = peakRssMb([consoleProcess.pid]);

  const statuses = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  const at = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))];
  const short = answers.filter((a) => a.enqueued !== ROWS);
  console.log(`${UPLOADS} uploads of ${ROWS} rows at once: all answered in ${wallMs} ms; statuses ${JSON.stringify(statuses)}; each ${at(0.5)} ms (p50), ${at(0.99)} ms (p99), ${ms[ms.length - 1]} ms (max); the console's peak RSS ${peak.toFixed(0)} MB`);
  if (/"level":50/.test(out)) console.log('the console logged errors:', out.split('\n').filter((l) => l.includes('"level":50')).slice(0, 3).join('\n'));
  if (short.length > 0) {
    console.log(`${short.length} uploads did not enqueue all ${ROWS} rows, e.g.: ${short[0].status} ${short[0].body.slice(0, 300)}`);
    process.exitCode = 1;
  }
} finally {
  consoleProcess?.kill('SIGTERM');
  await redis.stop();
}
