import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger, maskUrl } from '../src/logger.js';

describe('secrets never reach a log line', () => {
  it('masks credentials in URLs, idempotently', () => {
    expect(maskUrl('cannot reach redis://admin:s3cret@10.0.0.1:7001/0 now')).toBe('cannot reach redis://admin:***@10.0.0.1:7001/0 now');
    expect(maskUrl('redis://:s3cret@h:1')).toBe('redis://***@h:1');
    expect(maskUrl('https://tok123@api.example.com/x')).toBe('https://***@api.example.com/x');
    expect(maskUrl(maskUrl('rediss://u:p@h'))).toBe('rediss://u:***@h');
    expect(maskUrl('http://127.0.0.1:3000/sellers')).toBe('http://127.0.0.1:3000/sellers');
  });

  it('redacts secret fields and masks URLs in messages, fields and errors', () => {
    let out = '';
    const sink = new Writable({ write(chunk, _e, cb) { out += chunk; cb(); } });
    const log = createLogger({ level: 'info' }, sink as never);
    log.info({ password: 'hunter2', url: 'redis://u:hunter2@h:1', headers: { authorization: 'Bearer hunter2' } }, 'at redis://u:hunter2@h:1');
    log.error({ err: new Error('connect to redis://:hunter2@h:1 failed') }, 'boom');
    expect(out).not.toContain('hunter2');
    expect(out).toContain('redis://u:***@h:1');
  });
});
