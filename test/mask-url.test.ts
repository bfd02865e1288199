import { describe, expect, it } from 'vitest';
import { maskUrl } from '../src/mask-url.js';
import { loadConfig } from '../src/config.js';
import { safeText } from '../src/cli/exit.js';

describe('maskUrl and secret query parameters', () => {
  it('masks every parameter whose name holds secret, token, key, sig, pass, pwd, auth or credential, in any case', () => {
    const url = 'https://api.example.com/x?client_secret=CS1&access_key=AK1&sig=SG1&api_token=AT1&X-Amz-Signature=AS1&Password=P1&pwd=W1&auth=A1&credential=C1&ClientSecret=CC1&page=2';
    expect(maskUrl(url)).toBe(
      'https://api.example.com/x?client_secret=***&access_key=***&sig=***&api_token=***&X-Amz-Signature=***&Password=***&pwd=***&auth=***&credential=***&ClientSecret=***&page=2',
    );
    // those masked before stay masked; other parameters are kept
    expect(maskUrl('https://h/x?token=T1&apiKey=K1&a=1;key=K2')).toBe('https://h/x?token=***&apiKey=***&a=1;key=***');
    expect(maskUrl('https://h/x?db=0&page=2#sig')).toBe('https://h/x?db=0&page=2#sig');
    expect(maskUrl(maskUrl(url))).toBe(maskUrl(url));
  });

  it('leaves no secret of an invalid REGISTRATION_API_URL in the config error the CLI prints', () => {
    const url = 'ftp://u:pw1@h/x?client_secret=CS1&access_key=AK1&sig=SG1&api_token=AT1&token=T1&apiKey=K1';
    let message = '';
    try {
      loadConfig({ REGISTRATION_API_URL: url });
    } catch (err) {
      message = safeText((err as Error).message);
    }
    expect(message).toContain('REGISTRATION_API_URL="ftp://u:***@h/x?client_secret=***&access_key=***&sig=***&api_token=***&token=***&apiKey=***" is invalid');
    for (const secret of ['pw1', 'CS1', 'AK1', 'SG1', 'AT1', 'T1', 'K1']) expect(message).not.toMatch(new RegExp(`=${secret}\\b|:${secret}@`));
  });
});
