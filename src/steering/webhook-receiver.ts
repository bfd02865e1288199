/**
 * A receiver of the pool's notifications that verifies each request as a real receiver
 * would, with the standardwebhooks library and the secret the pool signs with: for
 * `webhook-echo`, the webhook tests and the chaos trial.
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

/** One request the receiver took. */
export interface ReceivedWebhook {
  /** Its `webhook-id` header (null when absent). */
  id: string | null;
  verified: boolean;
  /** The parsed body when it verified. */
  event?: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Why it did not verify. */
  problem?: string;
}

/**
 * An HTTP server (not listening yet) that verifies every request it takes with `secret`
 * (`whsec_<base64 key>`) and hands it to `received`, which may give the status to answer
 * with; else 204 when it verified, 401 when not.
 */
export function verifyingReceiver(secret: string, received: (got: ReceivedWebhook) => number | void): http.Server {
  const verifier = new Webhook(secret);
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = typeof req.headers['webhook-id'] === 'string' ? req.headers['webhook-id'] : null;
      let got: ReceivedWebhook;
      try {
        got = { id, verified: true, event: verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>) as ReceivedWebhook['event'] };
      } catch (err) {
        got = { id, verified: false, problem: (err as Error).message };
      }
      res.writeHead(received(got) ?? (got.verified ? 204 : 401)).end();
    });
  });
}

export { listenLocal } from '../listen.js';
