/** `bulk-register template <out.xlsx> [--lang ko|en]` */
import { writeFile } from 'node:fs/promises';
import { buildTemplate, type Lang } from '../report/template.js';
import { EXIT, UsageError } from './exit.js';

export async function templateCommand(out: string, lang: string): Promise<number> {
  if (lang !== 'ko' && lang !== 'en') throw new UsageError(`--lang ${JSON.stringify(lang)} is invalid: expected ko or en`);
  await writeOut(out, await buildTemplate(lang as Lang));
  process.stdout.write(`wrote ${out}: fill in the "${lang === 'ko' ? '상품' : 'products'}" sheet (row 2 is an example) and upload it with \`bulk-register upload ${out} --seller <id>\`\n`);
  return EXIT.ok;
}

export async function writeOut(path: string, bytes: Buffer): Promise<void> {
  try {
    await writeFile(path, bytes);
  } catch (err) {
    const { UploadRejected } = await import('../excel/errors.js');
    throw new UploadRejected(`cannot write ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}): check the folder exists and is writable.`);
  }
}
