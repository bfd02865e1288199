import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAdapter } from '../../src/registration/load-adapter.js';
import { Redactor } from '../../src/registration/redactor.js';

const dir = mkdtempSync(join(tmpdir(), 'br-adapter-'));
const at = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return { registrationAdapter: name, registrationToken: undefined };
};

describe('REGISTRATION_ADAPTER', () => {
  it('refuses, in one sentence, a module whose top-level await never ends', async () => {
    const config = at('hangs.mjs', 'await new Promise(() => {});\nexport default {};\n');
    await expect(loadAdapter(config, dir, undefined, 300)).rejects.toThrow(/^REGISTRATION_ADAPTER="hangs\.mjs" could not be loaded: it did not finish loading within 0\.3 s \(a top-level await that never ends\?\)\.$/);
  });

  it('takes announcesRules as true or false (false when left out), and refuses anything else in one sentence', async () => {
    const fns = 'request() { return { method: "POST", path: "/" }; }, outcome() { return { kind: "transient", reason: "x" }; }';
    expect((await loadAdapter(at('says.mjs', `export default { announcesRules: true, ${fns} };\n`), dir)).announcesRules).toBe(true);
    expect((await loadAdapter(at('silent.mjs', `export default { ${fns} };\n`), dir)).announcesRules).toBe(false);
    expect((await loadAdapter({ registrationAdapter: undefined, registrationToken: undefined }, dir)).announcesRules).toBe(false);
    await expect(loadAdapter(at('yes.mjs', `export default { announcesRules: 'yes', ${fns} };\n`), dir))
      .rejects.toThrow(/^REGISTRATION_ADAPTER="yes\.mjs" is invalid: its announcesRules is a string, expected true or false\.$/);
  });

  it('does not quote the credentials when the module fails to load saying them', async () => {
    const config = at('throws.mjs', "throw new Error('cannot start with clientSecret cs-live-7f3a9c');\n");
    const redactor = new Redactor();
    redactor.setSource('credentials', ['cs-live-7f3a9c']);
    await expect(loadAdapter(config, dir, redactor)).rejects.toThrow('REGISTRATION_ADAPTER="throws.mjs" could not be loaded: cannot start with clientSecret [redacted].');
  });
});
