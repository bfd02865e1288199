// Adds package-lock entries for platform-specific optional dependencies (rollup, esbuild,
// msgpackr-extract builds for other systems) that npm leaves out when its registry lacks
// them; without them `npm ci` refuses the lock. Run after `npm install`: node scripts/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
const run = promisify(execFile);
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const wanted = new Map();
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    if (lock.packages[`${base}node_modules/${name}`] || lock.packages[`node_modules/${name}`]) continue;
    wanted.set(`node_modules/${name}`, { name, spec, dev: entry.dev === true });
  }
}
console.log('missing', wanted.size);
const entries = [...wanted.entries()];
for (let i = 0; i < entries.length; i += 8) {
  await Promise.all(entries.slice(i, i + 8).map(async ([key, { name, spec, dev }]) => {
    let v;
    try {
      const { stdout } = await run('npm', ['view', `${name}@${spec}`, '--json', 'version', 'dist.integrity', 'os', 'cpu', 'libc', 'engines', 'license']);
      v = JSON.parse(stdout);
      if (Array.isArray(v)) v = v[v.length - 1];
    } catch {
      // not on this registry: the platform comes from the package's name
      const m = /(android|darwin|freebsd|linux|openbsd|openharmony|win32|sunos|aix|netbsd)-(arm64|x64|arm|ia32|loong64|ppc64|riscv64|s390x|mips64el)(?:-(gnueabihf|musleabihf|gnu|musl|msvc|eabi))?$/.exec(name);
      if (!m) throw new Error(`cannot tell the platform of ${name}`);
      v = { version: spec.replace(/^[\^~]/, ''), os: [m[1]], cpu: [m[2]] };
      if (m[3] && /musl/.test(m[3])) v.libc = ['musl'];
      else if (m[3] && /gnu/.test(m[3])) v.libc = ['glibc'];
      console.log('inferred', name, JSON.stringify(v));
    }
    const e = { version: v.version };
    if (v['dist.integrity']) e.integrity = v['dist.integrity'];
    if (v.cpu) e.cpu = v.cpu;
    if (dev) e.dev = true;
    if (v.engines) e.engines = v.engines;
    if (v.libc) e.libc = v.libc;
    if (v.license) e.license = v.license;
    e.optional = true;
    if (v.os) e.os = v.os;
    lock.packages[key] = e;
  }));
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
