/** `bulk-register mock-api` on a port that is taken: one sentence and exit 1, no internal error text. */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { baseEnv, runCli } from '../helpers/cli.js';

describe('mock-api command', () => {
  it('says a taken port is taken, in one sentence, and exits 1', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const res = await runCli(['mock-api', '--port', String(port)], baseEnv({}), 20_000);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`Port ${port} on 127.0.0.1 is taken: pick a free one with --port.\n`);
    } finally {
      taken.close();
    }
  });
});
