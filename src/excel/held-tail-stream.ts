/**
 * A workbook's bytes as the stream exceljs's reader unzips, with the zip's
 * central directory held back until the reader has taken every entry.
 *
 * Why: the unzipper under exceljs (unzipper 0.10) ends its stream of entries as
 * soon as it has parsed the zip's last record, even while entries it pushed
 * still wait to be read (unzipper PR #346, open). exceljs then stops short: in
 * about one read in 500 a workbook lost its last parts (exceljs writes
 * xl/workbook.xml last), and a good sheet was called damaged or the wrong sheet
 * was read. The entries come before the central directory, so while it is held
 * back the unzipper cannot reach the end.
 */
import { Readable } from 'node:stream';

/** What is read of unzipper's Parse stream: its two sides' queues, and push, to count the entries it emits. */
interface UnzipParser {
  readableLength: number;
  writableLength: number;
  push(chunk: unknown): boolean;
}

const POLL_MS = 1;
/**
 * Polls in a row with the unzipper idle, waiting for bytes, and no entry
 * queued, after which the tail is sent even though fewer entries came than the
 * directory lists: the zip is damaged, and the unzipper reports it.
 */
const IDLE_POLLS = 20;

function isUnzipParser(value: unknown): value is UnzipParser {
  const v = value as Partial<UnzipParser>;
  return typeof v.readableLength === 'number' && typeof v.writableLength === 'number' && typeof v.push === 'function';
}

export class HeldTailStream extends Readable {
  private parser: UnzipParser | undefined;
  private entriesPushed = 0;
  private idlePolls = 0;
  private started = false;

  /**
   * @param tailAt where the central directory starts; undefined sends everything at once.
   * @param entryCount how many entries the directory lists.
   */
  constructor(
    private readonly bytes: Buffer,
    private readonly tailAt: number | undefined,
    private readonly entryCount: number,
  ) {
    super();
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    if (isUnzipParser(destination)) {
      const parser = destination;
      const push = parser.push.bind(parser);
      parser.push = (chunk: unknown) => {
        if (chunk !== null) this.entriesPushed++;
        return push(chunk);
      };
      this.parser = parser;
    }
    return super.pipe(destination, options);
  }

  override _read(): void {
    if (this.started) return;
    this.started = true;
    const at = this.tailAt;
    if (this.parser === undefined || at === undefined || at <= 0 || at >= this.bytes.length) {
      this.push(this.bytes);
      this.push(null);
      return;
    }
    this.push(this.bytes.subarray(0, at));
    this.sendTailWhenTaken(at);
  }

  private sendTailWhenTaken(at: number): void {
    if (this.destroyed) return;
    const parser = this.parser!;
    const idle = this.readableLength === 0 && parser.writableLength === 0 && parser.readableLength === 0;
    this.idlePolls = idle ? this.idlePolls + 1 : 0;
    if (idle && (this.entriesPushed >= this.entryCount || this.idlePolls >= IDLE_POLLS)) {
      this.push(this.bytes.subarray(at));
      this.push(null);
      return;
    }
    setTimeout(() => this.sendTailWhenTaken(at), POLL_MS);
  }
}
