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
    // a password holding `@` or a space, unencoded, as clients accept it: masked whole
    expect(maskUrl('Cannot reach Redis at redis://:p@ssw0rdLEAK@127.0.0.1:1 now')).toBe('Cannot reach Redis at redis://***@127.0.0.1:1 now');
    expect(maskUrl('redis://admin:a@b@h:1/0')).toBe('redis://admin:***@h:1/0');
    expect(maskUrl('redis://:LEAK pw@127.0.0.1:1')).toBe('redis://***@127.0.0.1:1');
    expect(maskUrl(maskUrl('redis://:p@ssw0rd@h:1'))).toBe('redis://***@h:1');
    // a password in the query
    expect(maskUrl('redis://:x@127.0.0.1:1?password=LEAK2&db=1')).toBe('redis://***@127.0.0.1:1?password=***&db=1');
    expect(maskUrl('redis://127.0.0.1:1/?db=0&password=LEAK3')).toBe('redis://127.0.0.1:1/?db=0&password=***');
    expect(maskUrl('https://api.example.com/x?token=abc')).toBe('https://api.example.com/x?token=***');
    // two URLs on a line, each masked; plain text left alone
    expect(maskUrl('redis://:a@h1:1 and redis://u:b@h2:2')).toBe('redis://***@h1:1 and redis://u:***@h2:2');
    expect(maskUrl('write to ops@example.com about it')).toBe('write to ops@example.com about it');
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
