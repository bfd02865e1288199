/**
 * Masking of credentials in URLs, on its own so that a command that prints an
 * error without a logger (cli/exit.ts) does not load pino for it.
 */

/**
 * Credentials in URLs masked, anywhere in a text: `redis://user:secret@host` ->
 * `redis://user:***@host`, `https://token@host` -> `https://***@host`. Idempotent.
 */
export function maskUrl(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)([^\s/@]*)@/gi, (_m, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    if (colon === -1) return `${scheme}***@`;
    const user = userinfo.slice(0, colon);
    return user === '' || user === '***' ? `${scheme}***@` : `${scheme}${user}:***@`;
  });
}
