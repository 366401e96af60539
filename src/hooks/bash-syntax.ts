// tree-sitter-bash: the grammar's own package ships WASM with a node kind for every expansion and redirection;
// sh-syntax's tree keeps only command positions, mvdan-sh is deprecated, bash-parser unreleased since 2017.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Node, Parser } from 'web-tree-sitter';
import type { Deadline } from './deadline.js';

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

/** The parser, or null when it is not loaded by the deadline (the load goes on for the next line). */
const parserBy = async (deadline: Deadline): Promise<Parser | null> => {
  ready ??= load().catch((error: unknown) => {
    ready = undefined;
    throw error;
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    // setTimeout takes at most 2^31 - 1 ms, and fires at once past it.
    timer = setTimeout(() => resolve(null), Math.min(deadline.left(), 2 ** 31 - 1));
  });
  try {
    return await Promise.race([ready, late]);
  } finally {
    clearTimeout(timer);
  }
};

/** A command line read as bash: what `read` made of its tree, or why there is no tree. */
export type BashReading<T> = { read: T } | { unread: 'does not parse' | 'late' };

/**
 * Parses a command line as bash and reads its syntax tree with `read`. The parse stops at the
 * first syntax error, since such a line is held anyway and tree-sitter's error recovery is what
 * grows faster than the line (`)))…` of 4 KiB took a second), and at the deadline.
 */
export const readBash = async <T>(
  line: string,
  read: (root: Node) => T,
  deadline: Deadline,
): Promise<BashReading<T>> => {
  const parser = await parserBy(deadline);
  if (parser === null) return { unread: 'late' };
  let error = false;
  const tree = parser.parse(line, null, {
    // Called every 100 parser operations; `hasError` is set once every version of the parse is in error.
    progressCallback: (state) => {
      error = state.hasError;
      return error || deadline.passed();
    },
  });
  if (tree === null) {
    // A cancelled parse would otherwise resume on the next line.
    parser.reset();
    return { unread: error ? 'does not parse' : 'late' };
  }
  try {
    return { read: read(tree.rootNode) };
  } finally {
    tree.delete();
  }
};
