/** Types of row-reasons.js (a browser module the tests import too). */
export function rowReason(message: string, lang: string): string;
export function errorReason(message: string, lang: string): string;
export function warningReason(message: string, lang: string, columns?: Record<string, string>): string;
