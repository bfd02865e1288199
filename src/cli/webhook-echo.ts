/**
 * `bulk-register webhook-echo [--port P]`: a receiver for demos and trials. Verifies
 * each request with UPLOAD_WEBHOOK_SECRET (the standardwebhooks library, as a real
 * receiver would), answers 204 (401 when the signature is wrong), and prints one
 * JSON line per event: { webhookId, verified, type, timestamp, data }.
 */
import { ConfigError, type Config } from '../config.js';
import { listenLocal, verifyingReceiver } from '../steering/webhook-receiver.js';
import { checkWebhookConfig } from '../steering/webhooks.js';
import { EXIT, cannotListen } from './exit.js';

export async function webhookEchoCommand(port: number, config: Config): Promise<number> {
  if (!config.webhookSecret) throw new ConfigError('UPLOAD_WEBHOOK_SECRET is missing: webhook-echo verifies with the same secret the pool signs with (whsec_<base64 key>).');
  checkWebhookConfig({ ...config, webhookUrl: config.webhookUrl ?? 'http://127.0.0.1/' });
  const server = verifyingReceiver(config.webhookSecret, ({ id, verified, event }) => {
    process.stdout.write(`${JSON.stringify({ webhookId: id, verified, ...event })}\n`);
  });
  const listening = await listenLocal(server, port).catch((err: unknown) => {
    throw cannotListen(err, 'webhook receiver', '127.0.0.1', port);
  });
  process.stderr.write(`webhook-echo listening on http://127.0.0.1:${listening}/ (set UPLOAD_WEBHOOK_URL to it)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  server.close();
  return EXIT.ok;
}
