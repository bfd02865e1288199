/** Polls `fn` until it returns something truthy (returned), or throws after `timeoutMs` naming `what`. */
export async function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 60_000, everyMs = 100): Promise<NonNullable<T>> {
  // a deadline that is not a number would never pass: the test would hang to vitest's own limit
  if (!Number.isFinite(timeoutMs)) throw new Error(`until(${what}): timeout ${timeoutMs} is not a number of ms`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
