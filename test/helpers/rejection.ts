/** The sentence a sheet is refused with (UploadRejected); fails the test when it is not refused. */
import { expect } from 'vitest';
import { UploadRejected } from '../../src/excel/errors.js';

export async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(UploadRejected);
    return (err as Error).message;
  }
  throw new Error('expected the file to be rejected');
}
