/**
 * The HTTP side the two stand-ins share (the registration API and the marketplace):
 * listen on a local port with keep-alive as a real API's load balancer allows it,
 * and on close drop the connections still open, so that a test or a demo ends at once.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { listenLocal } from '../listen.js';

/** The most of a request's body a stand-in reads (bytes); the rest is dropped. */
const MAX_BODY = 1_000_000;

/** Calls `then` with the request's body as text (its first MAX_BODY bytes) once the whole request is in. */
export function onBody(req: http.IncomingMessage, then: (raw: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= MAX_BODY) chunks.push(c);
  });
  req.on('end', () => then(Buffer.concat(chunks).toString('utf8')));
}

export class LocalServer {
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();

  /** Listens on `port` (0: any free one) and returns the port taken. */
  listen(handler: http.RequestListener, port: number, host = '127.0.0.1'): Promise<number> {
    const server = http.createServer(handler);
    this.server = server;
    server.keepAliveTimeout = 30_000;
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    return listenLocal(server, port, host);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}
