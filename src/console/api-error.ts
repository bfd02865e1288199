/**
 * How the console refuses a request: an ApiError, answered as
 * `{"error": one sentence}` with its status (console.md), and the sentences a
 * seller's page can meet (the Korean page translates them: assets/row-reasons.js).
 */

export class ApiError extends Error {
  constructor(readonly status: 400 | 401 | 403 | 404 | 413 | 422 | 500 | 503, message: string) {
    super(message);
  }
}

export const REDIS_DOWN = 'Redis does not answer: the console can neither read nor change anything until it does; try again in a moment.';
/** An upload that was sent to Redis before it stopped answering may still be queued once it answers again. */
export const lateUpload = (ms: number) => `Redis did not answer within ${ms / 1000} s: the sheet may still be queued once it answers. Look at your uploads before sending it again (sending the same file again queues nothing twice).`;

/** A sheet posted while the intake line (intake.ts) holds as many as it may. */
export const lineFull = (waiting: number) => `the console has ${waiting} sheets waiting to be read before this one could be: nothing of it was queued; send it again in a minute.`;

export const INTERNAL_ERROR = 'the console could not answer (an internal error was logged): try again in a moment.';
export const LINKS_OFF = 'seller links are off on this console (CONSOLE_SECRET is not set): ask the operator.';
export const LINK_EXPIRED = 'this seller link has expired: ask the operator for a new one.';
export const LINK_INVALID = 'this seller link is not valid: ask the operator for a new one.';
export const OTHERS_UPLOAD = 'a seller may cancel only its own uploads.';
export const unknownUpload = (uploadId: string) => `no upload ${JSON.stringify(uploadId.slice(0, 80))} is known: check the id.`;
/** A seller id in a path, a query or a form that is not one. */
export const invalidSeller = (sellerId: string) => `seller ${JSON.stringify(sellerId.slice(0, 80))} is invalid: expected 1-64 characters of A-Z a-z 0-9 _ -.`;
