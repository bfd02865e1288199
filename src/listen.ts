/** Starting an HTTP server: the one way the project's servers take their port. */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `port` (0: a free one) at `host`; the port it got. Rejects with the listen error (a port taken, one not allowed). */
export async function listenLocal(server: http.Server, port: number, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}
