/**
 * The HTTP client for the registration API (registration-api.md): keep-alive
 * connections, API_TIMEOUT_MS, and `Idempotency-Key: {uploadId}:{row}` on every
 * attempt. Never throws for an answer or a failed request: it returns an ApiOutcome.
 */
import http from 'node:http';
import https from 'node:https';
import axios, { type AxiosInstance } from 'axios';
import type { Product } from '../excel/fields.js';
import { outcomeOf, outcomeOfError, type ApiOutcome } from './outcome.js';

export interface RegistrationClient {
  register(sellerId: string, idempotencyKey: string, product: Product): Promise<ApiOutcome>;
  close(): void;
}

export function createRegistrationClient(opts: { baseUrl: string; timeoutMs: number; now?: () => number }): RegistrationClient {
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  const now = opts.now ?? Date.now;
  const client: AxiosInstance = axios.create({
    baseURL: opts.baseUrl,
    timeout: opts.timeoutMs,
    httpAgent,
    httpsAgent,
    proxy: false,
    maxRedirects: 0,
    validateStatus: () => true,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
  });
  return {
    async register(sellerId, idempotencyKey, product) {
      try {
        const res = await client.post(`/sellers/${encodeURIComponent(sellerId)}/products`, product, {
          headers: { 'Idempotency-Key': idempotencyKey },
        });
        return outcomeOf(res.status, res.data, res.headers as Record<string, unknown>, now());
      } catch (err) {
        return outcomeOfError(err, opts.timeoutMs);
      }
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
