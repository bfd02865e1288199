// Run by `npm test` before anything else: the tests need redis-server (they
// start their own on free ports) and Debian's Chromium (the console's browser
// tests; playwright-core downloads no browser). As root with apt-get, a missing
// one is installed; otherwise one sentence says how, and the run stops.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = [];
if (!onPath('redis-server')) missing.push({ what: 'redis-server', pkg: 'redis-server' });
if (!existsSync(chromium)) missing.push({ what: `Chromium at ${chromium}`, pkg: 'chromium' });
// a headless browser needs none of Chromium's recommends (printing, sound, desktop services)
const recommends = ['--no-install-recommends'];

if (missing.length > 0) {
  const pkgs = missing.map((m) => m.pkg);
  if (process.getuid?.() === 0 && onPath('apt-get')) {
    process.stdout.write(`installing ${pkgs.join(' and ')} for the tests (apt-get) ...\n`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      execFileSync('apt-get', ['install', '-y', '-qq', ...recommends, ...pkgs], { stdio: 'ignore', env });
    } catch {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
      execFileSync('apt-get', ['install', '-y', '-qq', ...recommends, ...pkgs], { stdio: 'inherit', env });
    }
  } else {
    process.stderr.write(
      `The tests need ${missing.map((m) => m.what).join(' and ')}: install ${pkgs.join(' and ')} (Debian/Ubuntu: sudo apt-get install -y ${pkgs.join(' ')})${missing.some((m) => m.pkg === 'chromium') ? ', or set CHROMIUM_PATH to a Chromium or Chrome binary' : ''}, then run npm test again.\n`,
    );
    process.exit(1);
  }
}

if (!onPath('redis-server') || !existsSync(chromium)) {
  process.stderr.write(`The tests need redis-server and a Chromium at ${chromium}, and one is still missing: install it, or set CHROMIUM_PATH to a Chromium or Chrome binary.\n`);
  process.exit(1);
}
