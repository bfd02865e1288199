/** `upload`'s text summary: what a re-upload says, after a cancel and otherwise. */
import { describe, expect, it } from 'vitest';
import { summaryText } from '../../src/cli/upload.js';
import type { UploadSummary } from '../../src/upload/submit-upload.js';

const summary = (s: Partial<UploadSummary>): UploadSummary => ({
  uploadId: 'u1', sellerId: 'S1', file: 'a.xlsx', rows: 3, enqueued: 3, alreadyUploaded: false, errors: [], warnings: [], ...s,
});
const sheet = { valid: [{}, {}, {}] as never[], errors: [] };

describe('upload summary text', () => {
  it('says how many rows went again when the same file comes back after a cancel, and "nothing new" only when none did', () => {
    expect(summaryText(summary({}), sheet, false)).toContain('  enqueued: 3\n');
    const again = summaryText(summary({ enqueued: 2, alreadyUploaded: true }), sheet, false);
    expect(again).toContain('  enqueued again: 2 (');
    expect(again).not.toContain('nothing new');
    expect(summaryText(summary({ enqueued: 0, alreadyUploaded: true }), sheet, false)).toContain('nothing new was enqueued');
    expect(summaryText(summary({ enqueued: 0 }), sheet, true)).toContain('dry run: nothing was enqueued');
  });
});
