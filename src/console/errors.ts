/** The console cannot start or sign as asked; the message is one sentence saying what to set. */
export class ConsoleRefused extends Error {
  override readonly name = 'ConsoleRefused';
}
