import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machinesDocument } from './machines-doc.js';

/** `npm run docs:machines` writes docs/machines.md; with `--check` it only says whether it is up to date. */
const DOC = fileURLToPath(new URL('../../docs/machines.md', import.meta.url));

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const expected = machinesDocument();

if (values.check) {
  const committed = await readFile(DOC, 'utf8').catch(() => null);
  if (committed !== expected) {
    console.error('docs/machines.md is out of date: run npm run docs:machines');
    process.exitCode = 1;
  } else console.log('docs/machines.md is up to date.');
} else {
  await writeFile(DOC, expected);
  console.log('Wrote docs/machines.md.');
}
