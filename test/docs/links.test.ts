/**
 * Every relative link and image in the README, CONTRIBUTING, CHANGELOG and
 * docs/*.md resolves to a file or folder of the repository, and every `#anchor`
 * into a markdown file to one of its headings, slugged as GitHub does. Pure:
 * reads files, fetches nothing (links with a scheme are not checked).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';

const PAGES = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...readdirSync(join(PACKAGE_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The page without fenced code blocks and inline code, where `[x](y)` is not a link. */
const prose = (text: string) => text.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's heading anchor: markup dropped, lower case, punctuation but - and _ removed, spaces to -. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Anchors of a markdown file's headings; a repeated heading gets -1, -2, ... as on GitHub. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Link and image targets: `[text](target "title")`, `![alt](target)`, `[id]: target`, `<img src="target">`. */
function targets(text: string): string[] {
  const body = prose(text);
  const inline = [...body.matchAll(/!?\[(?:[^\]\n]|\][^(\n])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const defined = [...body.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!);
  const html = [...body.matchAll(/<(?:img|a)\s[^>]*?(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  return [...inline, ...defined, ...html];
}

/** What is wrong with one target of `page`, or undefined when it resolves. */
function broken(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: ...: not checked here
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = pathPart === '' ? join(PACKAGE_ROOT, page) : join(PACKAGE_ROOT, dirname(page), decodeURIComponent(pathPart));
  if (relative(PACKAGE_ROOT, file).startsWith('..')) return `${target}: outside the repository`;
  if (!existsSync(file)) return `${target}: no such file`;
  if (anchor === undefined || !file.endsWith('.md')) return undefined;
  return anchors(readFileSync(file, 'utf8')).has(anchor) ? undefined : `${target}: no heading with that anchor`;
}

describe('links in the documentation', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Steering: cancel, pause, outages, notifications')).toBe('steering-cancel-pause-outages-notifications');
    expect(slug('Redis Cluster and several hosts')).toBe('redis-cluster-and-several-hosts');
    expect(slug('`status --json` and `QUEUE_SHARDS`')).toBe('status---json-and-queue_shards');
    expect(slug('What happens under each fault (the failure suite)')).toBe('what-happens-under-each-fault-the-failure-suite');
    expect(slug('Connecting [a marketplace](docs/adapters.md)')).toBe('connecting-a-marketplace');
    expect([...anchors('# A\n## Notes\n```\n# not a heading\n```\n### Notes\n')]).toEqual(['a', 'notes', 'notes-1']);
  });

  it('finds the links it checks', () => {
    expect(targets('see [a](docs/a.md#x), ![b](b.png "t"), `[c](not-a-link)`, [d](https://x.example)\n\n[e]: CHANGELOG.md\n')).toEqual([
      'docs/a.md#x', 'b.png', 'https://x.example', 'CHANGELOG.md',
    ]);
    const readme = targets(readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8'));
    expect(readme.filter((t) => t.startsWith('docs/')).length).toBeGreaterThanOrEqual(5);
  });

  it.each(PAGES)('%s: every relative link and image resolves', (page) => {
    const text = readFileSync(join(PACKAGE_ROOT, page), 'utf8');
    const wrong = targets(text).flatMap((t) => broken(page, t) ?? []);
    expect(wrong).toEqual([]);
  });
});
