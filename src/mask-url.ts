/**
 * Masking of credentials in URLs, on its own so that a command that prints an
 * error without a logger (cli/exit.ts) does not load pino for it.
 */

const SCHEME = /[a-z][a-z0-9+.-]*:\/\//gi;
/**
 * A query parameter that carries a secret: any whose name holds secret, token, key, sig, pass,
 * pwd, auth or credential, in any case (`password=`, `client_secret=`, `api_token=`, `apiKey=`,
 * `access_key=`, `sig=`, `X-Amz-Signature=`, `auth=`, `credentials=`). A harmless one that
 * holds such a word (`design=`) is masked too: masking too much is the safe side.
 */
const SECRET_PARAM = /([?&;][^=&;#\s'"?]*?(?:secret|token|key|sig|pass|pwd|auth|credential)[^=&;#\s'"]*=)[^&;#\s'"]*/gi;

/**
 * Credentials in URLs masked, anywhere in a text: `redis://user:secret@host` ->
 * `redis://user:***@host`, `https://token@host` -> `https://***@host`,
 * `redis://h?password=secret` -> `redis://h?password=***`. Idempotent.
 *
 * A password may hold `@` or a space unencoded, and clients still accept it
 * (`redis://:p@ss word@host`): the credentials run to the last `@` before the
 * URL's path, query or line end, so the whole of such a password is masked. Text
 * after a URL on the same line that holds an `@` is masked with it: masking too
 * much is the safe side.
 */
export function maskUrl(text: string): string {
  let out = '';
  let from = 0;
  for (const m of text.matchAll(SCHEME)) {
    const start = m.index! + m[0].length;
    if (start < from) continue;
    const rest = text.slice(start);
    const end = rest.search(/[/?#\r\n]/);
    const authority = end === -1 ? rest : rest.slice(0, end);
    const at = authority.lastIndexOf('@');
    if (at === -1) continue;
    out += text.slice(from, start) + maskUserinfo(authority.slice(0, at)) + '@';
    from = start + at + 1;
  }
  return (out + text.slice(from)).replace(SECRET_PARAM, '$1***');
}

function maskUserinfo(userinfo: string): string {
  const colon = userinfo.indexOf(':');
  if (colon === -1) return '***';
  const user = userinfo.slice(0, colon);
  return user === '' || user === '***' || /\s/.test(user) ? '***' : `${user}:***`;
}
