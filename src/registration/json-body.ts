/**
 * An answer's body as JSON, with every integer too large for a JavaScript number
 * (beyond 2^53, as 64-bit ids often are) kept exactly, as the text of its digits.
 * JSON.parse turns {"productId": 1234567890123456789} into 1234567890123456800: the
 * row would be reported with another product's id. Such a number is read as the
 * string "1234567890123456789"; every other value is what JSON.parse gives.
 */

/** Integer literals of 16 digits or more, the only ones that may lose digits (2^53 has 16). */
const LONG_INTEGER = /\d{16,}/;

/** Parses `text` as JSON; throws as JSON.parse does. */
export function parseJsonBody(text: string): unknown {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  return JSON.parse(quoteUnsafeIntegers(text));
}

/**
 * `text` with each integer literal outside strings that is not a safe integer put in
 * quotes. A scan that knows strings and their escapes: digits inside a string are
 * never touched. Text that is not JSON comes out as invalid as it went in.
 */
function quoteUnsafeIntegers(text: string): string {
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // skip the string, escapes included
      i++;
      while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c /* \ */ ? 2 : 1;
      i++;
      continue;
    }
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < text.length && /[0-9eE+\-.]/.test(text[end]!)) end++;
      const literal = text.slice(i, end);
      if (/^-?\d{16,}$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(copied, i)}"${literal}"`;
        copied = end;
      }
      i = end;
      continue;
    }
    i++;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
