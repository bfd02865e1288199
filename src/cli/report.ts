/** `bulk-register report --upload <id> --out <file.xlsx> [--failed-only]` */
import type { Config } from '../config.js';
import { connectChecked, createRedis } from '../redis.js';
import { buildReport, readReportRows, UnknownUpload } from '../report/upload-report.js';
import { EXIT } from './exit.js';
import { writeOut } from './template.js';

export async function reportCommand(flags: { upload: string; out: string; failedOnly?: boolean }, config: Config): Promise<number> {
  const redis = createRedis(config, 'cli');
  await connectChecked(redis, config);
  try {
    const { sellerId, columns, rows } = await readReportRows(redis, config, flags.upload);
    await writeOut(flags.out, await buildReport(rows, { failedOnly: Boolean(flags.failedOnly), columns }));
    const count = (s: string) => rows.filter((r) => r.status === s).length;
    const written = flags.failedOnly ? count('failed') + count('invalid') : rows.length;
    process.stdout.write(
      `wrote ${flags.out}: ${written} row${written === 1 ? '' : 's'} of upload ${flags.upload} (seller ${sellerId}): registered ${count('registered')}, duplicate ${count('duplicate')}, failed ${count('failed')}, invalid ${count('invalid')}${count('cancelled') > 0 ? `, cancelled ${count('cancelled')}` : ''}, pending ${count('pending')}\n`,
    );
    return EXIT.ok;
  } catch (err) {
    if (err instanceof UnknownUpload) {
      process.stderr.write(`${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}\n`);
      return EXIT.failure;
    }
    throw err;
  } finally {
    redis.disconnect();
  }
}
