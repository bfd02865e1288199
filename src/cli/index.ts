/**
 * The command table. The only code that touches argv, signals and process.exit.
 * Exit codes: 0 ok, 1 failure (one sentence on stderr), 2 usage, 3 some rows invalid.
 *
 * Each command's module is loaded when that command runs: loading them all (BullMQ,
 * ioredis, exceljs, hono, zod) cost every invocation about 1.9 s of CPU on the bench
 * machine, `--version` and a usage mistake included.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import dotenv from 'dotenv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { EXIT, exitWhenWritten, fail } from './exit.js';

dotenv.config({ quiet: true });

function wholeNumber(name: string, min: number, max: number) {
  return (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max} for ${name}.`);
    }
    return Number(value);
  };
}

/** A flag that takes one value: given twice, it is a usage error rather than the last one silently winning. */
function once(name: string) {
  return (value: string, previous: string | undefined) => {
    if (previous !== undefined) throw new InvalidArgumentError(`${name} was given twice (${JSON.stringify(previous)}, then ${JSON.stringify(value)}): give it once.`);
    return value;
  };
}

/** Config from the environment, with command-line overrides applied as environment values. */
async function configWith(overrides: Record<string, string | number | undefined> = {}): Promise<Config> {
  const { loadConfig } = await import('../config.js');
  const env = { ...process.env };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) env[k] = String(v);
  Object.assign(process.env, Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)])));
  return loadConfig(env);
}

/** The logger of a long-running command (workers, mock-api, console). */
async function loggerFor(config: Config, name: string): Promise<Logger> {
  const { createLogger } = await import('../logger.js');
  return createLogger({ level: config.logLevel, pretty: config.logPretty, name });
}

function run(action: () => Promise<number>): Promise<void> {
  return action().then(
    (code) => exitWhenWritten(code),
    (err: unknown) => fail(err),
  );
}

const program = new Command();
program
  .name('bulk-register')
  .description('Register marketplace products in bulk from an Excel sheet, throttled per seller.')
  .version((JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version)
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .configureOutput({ outputError: (str, write) => write(str) });

program
  .command('upload')
  .description('parse and validate a sheet, then enqueue one job per valid row')
  .argument('<file>', 'the .xlsx (or .csv) sheet')
  .requiredOption('--seller <id>', 'the seller the products belong to', once('--seller'))
  .option('--dry-run', 'validate only; enqueue nothing')
  .option('--json', 'print one JSON object on stdout')
  .option('--strict', 'refuse to enqueue when Redis may evict keys (maxmemory-policy other than noeviction)')
  .addHelpText('after', `
Exit codes:
  0  every row enqueued (on a replica too, when the master has replicas)
  1  nothing enqueued: the file was refused, no row is valid, or Redis is unreachable
  2  usage error
  3  some rows invalid (listed); the valid ones enqueued
  4  the rows reached the Redis master, but no replica confirmed them within 2 s:
     a failover now could lose them; upload again once the replica is back
     (nothing is enqueued twice)`)
  .action((file: string, opts: { seller: string; dryRun?: boolean; json?: boolean; strict?: boolean }) =>
    run(async () => (await import('./upload.js')).uploadCommand(file, opts, await configWith())),
  );

program
  .command('workers')
  .description('run the worker pool until SIGINT/SIGTERM, then drain and exit 0')
  .addOption(new Option('--processes <n>', 'worker processes (default WORKER_PROCESSES, 16)').argParser(wholeNumber('--processes', 1, 256)))
  .addOption(new Option('--concurrency <c>', 'jobs per process at once (default WORKER_CONCURRENCY, auto: 1 to 64 from the API answer time)').argParser(wholeNumber('--concurrency', 1, 100)))
  .option('--strict', 'refuse to start when Redis may evict keys (maxmemory-policy other than noeviction)')
  .action((opts: { processes?: number; concurrency?: number; strict?: boolean }) =>
    run(async () => {
      const config = await configWith({ WORKER_PROCESSES: opts.processes, WORKER_CONCURRENCY: opts.concurrency });
      const { workersCommand } = await import('./workers.js');
      return workersCommand(config, await loggerFor(config, 'pool'), { strict: opts.strict });
    }),
  );

program
  .command('status')
  .description('per-seller and per-upload progress')
  .option('--upload <id>', 'only this upload', once('--upload'))
  .option('--seller <id>', "only this seller's uploads", once('--seller'))
  .option('--wait', 'block until the chosen uploads have no unfinished row, then print the final state')
  .option('--watch', 'live view refreshed every second (plain lines when not a terminal); with --wait, ends when done')
  .option('--json', 'print one JSON object on stdout')
  .action((opts: { upload?: string; seller?: string; wait?: boolean; watch?: boolean; json?: boolean }) =>
    run(async () => (await import('./status.js')).statusCommand(opts, await configWith())),
  );

program
  .command('mock-api')
  .description('serve the registration API (registration-api.md) with its rate rule, for demos and tests')
  .addOption(new Option('--port <p>', 'port (default MOCK_API_PORT, 3000)').argParser(wholeNumber('--port', 0, 65535)))
  .option('--marketplace', 'serve the marketplace stand-in instead (signed tokens, /v2/products; clients from MOCK_MARKETPLACE_CLIENTS, default S1..S3): for examples/marketplace-adapter.mjs')
  .action((opts: { port?: number; marketplace?: boolean }) =>
    run(async () => {
      const config = await configWith({ MOCK_API_PORT: opts.port });
      const { mockApiCommand } = await import('./mock-api.js');
      return mockApiCommand(config.mockApiPort, config, await loggerFor(config, 'mock-api'), { marketplace: opts.marketplace });
    }),
  );

program
  .command('template')
  .description('write an upload template: headers, validation, an example row and instructions')
  .argument('<out>', 'the .xlsx file to write')
  .addOption(new Option('--lang <lang>', 'header language').choices(['ko', 'en']).default('ko'))
  .option('--columns <file.json>', "the marketplace's own columns to add after ours: a JSON array of headers or { header, note, example } (default TEMPLATE_COLUMNS_FILE)")
  .option('--force', 'write over <out> if it exists (else refused: it may be a filled-in sheet)')
  .action((out: string, opts: { lang: string; columns?: string; force?: boolean }) => run(async () => (await import('./template.js')).templateCommand(out, opts, await configWith())));

program
  .command('report')
  .description("write an upload's per-row report (or only the rows to fix) as .xlsx")
  .requiredOption('--upload <id>', 'the upload id', once('--upload'))
  .requiredOption('--out <file>', 'the .xlsx file to write')
  .option('--failed-only', 'only failed and invalid rows, in the upload format, to correct and upload again')
  .action((opts: { upload: string; out: string; failedOnly?: boolean }) => run(async () => (await import('./report.js')).reportCommand(opts, await configWith())));

const limits = program.command('limits').description("per-seller rules (seller tiers), picked up by the limiter on its next call");
limits
  .command('set')
  .description("set a seller's own rule: <max> registrations per window")
  .argument('<seller>', 'the seller')
  .argument('<max>', 'registrations per window', wholeNumber('<max>', 1, 1_000_000))
  .addOption(new Option('--window-ms <ms>', 'the window (default RATE_LIMIT_WINDOW_MS)').argParser(wholeNumber('--window-ms', 1, 86_400_000)))
  .action((seller: string, max: number, opts: { windowMs?: number }) => run(async () => (await import('./limits.js')).limitsCommand('set', { seller, max, windowMs: opts.windowMs }, await configWith())));
limits
  .command('list')
  .description('list the sellers with a rule of their own')
  .option('--json', 'print one JSON object on stdout')
  .action((opts: { json?: boolean }) => run(async () => (await import('./limits.js')).limitsCommand('list', { json: opts.json }, await configWith())));
limits
  .command('reset')
  .description('drop a seller\'s own rule: the default (or the rule the marketplace announced) applies again')
  .argument('<seller>', 'the seller')
  .action((seller: string) => run(async () => (await import('./limits.js')).limitsCommand('reset', { seller }, await configWith())));

program
  .command('webhook-echo')
  .description('a receiver for the pool\'s notifications: verifies each with UPLOAD_WEBHOOK_SECRET and prints it as a JSON line')
  .addOption(new Option('--port <p>', 'port (default 8787)').argParser(wholeNumber('--port', 0, 65535)))
  .action((opts: { port?: number }) => run(async () => (await import('./webhook-echo.js')).webhookEchoCommand(opts.port ?? 8787, await configWith())));

program
  .command('cancel')
  .description('stop an upload: no call for its rows leaves any more; rows not sent end cancelled, rows in flight end as answered')
  .requiredOption('--upload <id>', 'the upload to stop', once('--upload'))
  .option('--json', 'print the upload as in status --json')
  .action((opts: { upload: string; json?: boolean }) => run(async () => (await import('./steer.js')).cancelCommand(opts, await configWith())));

program
  .command('pause')
  .description('hold a seller (or every seller): no new call leaves until resume; rows stay pending and use no attempt')
  .option('--seller <id>', 'the seller to hold', once('--seller'))
  .option('--all', 'hold every seller')
  .option('--reason <text>', 'why, shown in status and the console')
  .option('--json', 'print one JSON object on stdout')
  .action((opts: { seller?: string; all?: boolean; reason?: string; json?: boolean }) => run(async () => (await import('./steer.js')).pauseCommand(opts, await configWith())));

program
  .command('resume')
  .description('lift a pause, whoever set it (the operator, or the pool when the marketplace refused the credentials)')
  .option('--seller <id>', 'the seller to release', once('--seller'))
  .option('--all', 'lift the pause of every seller')
  .option('--json', 'print one JSON object on stdout')
  .action((opts: { seller?: string; all?: boolean; json?: boolean }) => run(async () => (await import('./steer.js')).resumeCommand(opts, await configWith())));

const consoleCmd = program
  .command('console')
  .description('the web console for sellers and operators (console.md), until SIGINT/SIGTERM')
  .addOption(new Option('--port <p>', 'port (default CONSOLE_PORT, 8080)').argParser(wholeNumber('--port', 0, 65535)))
  .option('--strict', 'refuse to start when Redis may evict keys (maxmemory-policy other than noeviction)')
  .action((opts: { port?: number; strict?: boolean }) =>
    run(async () => {
      const config = await configWith({ CONSOLE_PORT: opts.port });
      const { consoleCommand } = await import('./console.js');
      return consoleCommand(config, await loggerFor(config, 'console'), { strict: opts.strict });
    }),
  );
consoleCmd
  .command('link')
  .description("print a signed link to a seller's page (needs CONSOLE_SECRET); its address is CONSOLE_PUBLIC_URL, else http://CONSOLE_HOST:CONSOLE_PORT (set them as the console runs: its --port is not known here)")
  .requiredOption('--seller <id>', 'the seller the link opens', once('--seller'))
  .option('--ttl <duration>', 'how long the link works: 90s, 30m, 12h, 7d (default 7d, at most 366d)')
  .action((opts: { seller: string; ttl?: string }) => run(async () => (await import('./console.js')).consoleLinkCommand(await configWith(), opts)));

try {
  if (process.argv.length <= 2) {
    program.outputHelp();
    process.exit(EXIT.usage);
  }
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    const helpShown = err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version';
    // help asked for is a success; help shown for a command given without its subcommand is a usage error
    process.exit(helpShown && err.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  fail(err);
}
