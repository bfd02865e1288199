/** The whole file cannot be used. The message is one sentence saying what was wrong and what to do. */
export class UploadRejected extends Error {
  override readonly name = 'UploadRejected';
}
