import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../src/registration/json-body.js';

describe('parseJsonBody', () => {
  it('keeps an integer beyond 2^53 exactly, as the text of its digits', () => {
    // JSON.parse gives 1234567890123456800 here: another product's id
    expect(parseJsonBody('{"productId": 1234567890123456789}')).toEqual({ productId: '1234567890123456789' });
    expect(parseJsonBody('{"a":[-98765432109876543210,{"b":9007199254740993}]}')).toEqual({ a: ['-98765432109876543210', { b: '9007199254740993' }] });
  });

  it('leaves safe numbers, decimals and digits inside strings as JSON.parse reads them', () => {
    expect(parseJsonBody('{"productId": 9007199254740991, "n": 12, "x": 1234567890123456789.5}')).toEqual({ productId: 9007199254740991, n: 12, x: 1234567890123456789.5 });
    const text = '{"error":"sku \\"12345678901234567890\\" taken","id":"12345678901234567890","productId":12345678901234567890}';
    expect(parseJsonBody(text)).toEqual({ error: 'sku "12345678901234567890" taken', id: '12345678901234567890', productId: '12345678901234567890' });
  });

  it('refuses what is not JSON, as JSON.parse does', () => {
    expect(() => parseJsonBody('{"productId": 12345678901234567890')).toThrow(SyntaxError);
    expect(() => parseJsonBody('{productId: 12345678901234567890}')).toThrow(SyntaxError);
  });
});
