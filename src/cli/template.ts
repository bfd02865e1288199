/** `bulk-register template <out.xlsx> [--lang ko|en] [--columns <file.json>]` */
import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Config } from '../config.js';
import { buildTemplate, type Lang } from '../report/template.js';
import { loadTemplateColumns } from '../report/template-columns.js';
import { EXIT, UsageError } from './exit.js';

/**
 * @param flags.columns the marketplace's columns file; wins over TEMPLATE_COLUMNS_FILE
 * @throws ConfigError when the columns file is missing or not a valid list (one sentence)
 */
export async function templateCommand(out: string, flags: { lang: string; columns?: string; force?: boolean }, config: Pick<Config, 'templateColumnsFile'>): Promise<number> {
  const { lang } = flags;
  if (lang !== 'ko' && lang !== 'en') throw new UsageError(`--lang ${JSON.stringify(lang)} is invalid: expected ko or en`);
  const extra = flags.columns !== undefined
    ? await loadTemplateColumns(flags.columns, '--columns')
    : config.templateColumnsFile !== undefined ? await loadTemplateColumns(config.templateColumnsFile, 'TEMPLATE_COLUMNS_FILE') : [];
  // a seller's filled-in sheet is the likeliest file of that name: an empty template never replaces it unasked
  await writeOut(out, await buildTemplate(lang as Lang, extra), { overwrite: Boolean(flags.force) });
  const added = extra.length === 0 ? '' : ` (with ${extra.length} marketplace column${extra.length === 1 ? '' : 's'} after ours)`;
  process.stdout.write(`wrote ${out}${added}: fill in the "${lang === 'ko' ? '상품' : 'products'}" sheet (row 2 is an example) and upload it with \`bulk-register upload ${out} --seller <id>\`\n`);
  return EXIT.ok;
}

/** @param opts.overwrite false: an existing file is refused, with a sentence (default true: a report is written again) */
export async function writeOut(path: string, bytes: Buffer, opts: { overwrite?: boolean } = {}): Promise<void> {
  const ext = extname(path).toLowerCase();
  // the file is a workbook whatever its name says: a .csv name would only mislead the next program
  if (ext !== '' && ext !== '.xlsx') throw new UsageError(`${JSON.stringify(path)} ends in ${ext}, but the file written is an .xlsx workbook: give a name ending in .xlsx`);
  try {
    await writeFile(path, bytes, { flag: opts.overwrite === false ? 'wx' : 'w' });
  } catch (err) {
    const { UploadRejected } = await import('../excel/errors.js');
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' ? 'it exists already (it may be a filled-in sheet): give another name, or --force to write over it'
      : code === 'EISDIR' ? 'it is a folder: give a file name ending in .xlsx'
      : code === 'ENOENT' ? 'its folder does not exist: create it, or give another path'
      : code === 'EACCES' || code === 'EPERM' ? 'writing there is not permitted: give a path you may write to'
      : `${code ?? 'error'}: check the folder exists and is writable`;
    throw new UploadRejected(`cannot write ${path}: ${why}.`);
  }
}
