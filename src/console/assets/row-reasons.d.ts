/** Types of row-reasons.js (a browser module the tests import too). */
export function rowReason(message: string, lang: string): string;
export function fileReason(message: string, lang: string): string;
