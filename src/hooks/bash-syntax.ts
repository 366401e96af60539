// tree-sitter-bash: the grammar's own package ships WASM with a node kind for every expansion and redirection;
// sh-syntax's tree keeps only command positions, mvdan-sh is deprecated, bash-parser unreleased since 2017.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Node, Parser } from 'web-tree-sitter';

let ready: Promise<Parser> | undefined;

const load = async (): Promise<Parser> => {
  // Imported at the first command line, so a process that never classifies one never loads the WASM.
  const { Language, Parser } = await import('web-tree-sitter');
  await Parser.init();
  // Beside the bundle (dist/bundle/, where web-tree-sitter finds its own WASM too), else the package's.
  const bundled = fileURLToPath(new URL('./tree-sitter-bash.wasm', import.meta.url));
  const grammar = existsSync(bundled)
    ? bundled
    : createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
  return new Parser().setLanguage(await Language.load(grammar));
};

/** Parses a command line as bash and reads its syntax tree with `read`; null when the parser gives up. */
export const readBash = async <T>(line: string, read: (root: Node) => T): Promise<T | null> => {
  ready ??= load().catch((error: unknown) => {
    ready = undefined;
    throw error;
  });
  const tree = (await ready).parse(line);
  if (tree === null) return null;
  try {
    return read(tree.rootNode);
  } finally {
    tree.delete();
  }
};
