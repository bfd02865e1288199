/**
 * `bulk-register webhook-echo [--port P]`: a receiver for demos and trials. Verifies
 * each request with UPLOAD_WEBHOOK_SECRET (the standardwebhooks library, as a real
 * receiver would), answers 204 (401 when the signature is wrong), and prints one
 * JSON line per event: { webhookId, verified, type, timestamp, data }.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { ConfigError, type Config } from '../config.js';
import { checkWebhookConfig } from '../steering/webhooks.js';
import { EXIT } from './exit.js';

export async function webhookEchoCommand(port: number, config: Config): Promise<number> {
  if (!config.webhookSecret) throw new ConfigError('UPLOAD_WEBHOOK_SECRET is missing: webhook-echo verifies with the same secret the pool signs with (whsec_<base64 key>).');
  checkWebhookConfig({ ...config, webhookUrl: config.webhookUrl ?? 'http://127.0.0.1/' });
  const verifier = new Webhook(config.webhookSecret);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: unknown;
      let verified = true;
      try {
        event = verifier.verify(body, req.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      process.stdout.write(`${JSON.stringify({ webhookId: req.headers['webhook-id'] ?? null, verified, ...(verified ? (event as object) : {}) })}\n`);
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  process.stderr.write(`webhook-echo listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/ (set UPLOAD_WEBHOOK_URL to it)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  server.close();
  return EXIT.ok;
}
