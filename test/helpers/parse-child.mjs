// Parses one file in a fresh process and reports the outcome, wall time and peak RSS.
import { loadSheet } from '../../dist/src/excel/load-sheet.js';

const started = process.hrtime.bigint();
let result;
try {
  const s = await loadSheet(process.argv[2]);
  result = { ok: true, rows: s.rows, valid: s.valid.length, errors: s.errors.slice(0, 5), errorCount: s.errors.length, warnings: s.warnings, extraColumns: s.extraColumns.length };
} catch (err) {
  result = { ok: false, name: err.name, message: err.message };
}
result.ms = Number(process.hrtime.bigint() - started) / 1e6;
result.maxRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify(result));
