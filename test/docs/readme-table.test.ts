import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { END, START, measuredBlock, withMeasured } from '../../bench/readme-table.js';
import type { ScenarioResult } from '../../bench/harness.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

describe("the README's measured table", () => {
  it('is the one bench/results.json holds, between the markers the bench writes it in', () => {
    const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(START);
    expect(readme).toContain(END);
    const { scenarios } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'bench/results.json'), 'utf8')) as { scenarios: ScenarioResult[] };
    const block = readme.slice(readme.indexOf(START), readme.indexOf(END) + END.length);
    const date = /run of (\d{4}-\d{2}-\d{2})/.exec(block)?.[1] ?? '';
    expect(block).toBe(measuredBlock(scenarios, date));
  });

  it('replaces only what lies between the markers', () => {
    const block = `${START}\nnew\n${END}`;
    expect(withMeasured(`a\n${START}\nold\n${END}\nb`, block)).toBe(`a\n${block}\nb`);
    expect(withMeasured('no markers', block)).toBe('no markers');
  });
});
