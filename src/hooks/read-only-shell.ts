import type { Node } from 'web-tree-sitter';
import { readBash } from './bash-syntax.js';
import { type Argument, programWhy } from './shell-programs.js';
import { expansionWhy, literalWord } from './shell-word.js';

// While a replan is pending, a shell command runs only when it only reads, and this fails closed:
// bash's grammar parses the line, and it reads only when every command is a simple command of a
// listed program (shell-programs.ts) whose words are literals, with no assignment, no expansion, and
// no redirection but from a file, to /dev/null or between descriptors. Anything else is held, and
// the agent can read with its own read tools.

/** Whether a command line only reads, and when it does not, why it is held (a short reason for the agent). */
export type ShellVerdict = { readOnly: true } | { readOnly: false; why: string };

/** Why a statement that is not a simple command is held, by node kind. */
const STATEMENTS: Readonly<Record<string, string>> = {
  subshell: 'runs a subshell',
  compound_statement: 'runs a compound command',
  if_statement: 'runs an if statement',
  while_statement: 'runs a loop',
  for_statement: 'runs a loop',
  c_style_for_statement: 'runs a loop',
  case_statement: 'runs a case statement',
  function_definition: 'defines a function',
  variable_assignment: 'assigns a variable',
  variable_assignments: 'assigns a variable',
  declaration_command: 'declares a variable',
  unset_command: 'unsets a variable',
  test_command: 'runs a test command',
  comment: 'has a comment',
};

/** Tokens between commands that only sequence, pipe or negate them. */
const SEPARATORS = new Set([';', '&&', '||', '|', '|&', '!']);

const OUTPUT = new Set(['>', '>>', '>|', '&>', '&>>', '>&']);

const firstWhy = (nodes: readonly Node[], why: (node: Node) => string | null): string | null => {
  for (const node of nodes) {
    const found = why(node);
    if (found !== null) return found;
  }
  return null;
};

const redirectWhy = (node: Node): string | null => {
  if (node.type === 'heredoc_redirect') return 'feeds a here-document';
  if (node.type === 'herestring_redirect') return 'feeds a here-string';
  if (node.type !== 'file_redirect') return expansionWhy(node);
  // `{name}>…` opens a descriptor and assigns its number to `name`; the grammar reads `{name}` as a word.
  const before = node.previousSibling;
  if (before !== null && before.endIndex === node.startIndex && /(?:^|\s)\{[^\s{}]*\}$/.test(before.text)) {
    return 'redirects a named descriptor';
  }
  let operator = '';
  const targets: Node[] = [];
  for (const child of node.children) {
    if (child.type === 'file_descriptor') {
      if (!/^\d+$/.test(child.text)) return 'redirects a named descriptor';
    } else if (child.isNamed) targets.push(child);
    else operator += child.text;
  }
  // The grammar files words after a redirection under it; bash gives them to the command.
  if (targets.length > 1) return 'has words after a redirection';
  if (targets.length === 0) return `redirects with ${operator}`;
  const target = literalWord(targets[0]!);
  if ('why' in target) return target.why;
  if (operator === '<') return null;
  if (OUTPUT.has(operator) && target.value === '/dev/null' && !target.glob) return null;
  if ((operator === '>&' || operator === '<&') && /^\d+$/.test(target.value)) return null;
  return OUTPUT.has(operator)
    ? `writes a file (${operator}${target.value})`
    : `redirects with ${operator}${target.value}`;
};

const commandWhy = (node: Node): string | null => {
  const words: Argument[] = [];
  let previous: Node | undefined;
  for (const child of node.children) {
    if (child.type.endsWith('_redirect')) {
      const why = redirectWhy(child);
      if (why !== null) return why;
      continue;
    }
    if (child.type === 'variable_assignment') return 'assigns a variable';
    // Two words with nothing between them are one word to bash.
    if (previous !== undefined && previous.endIndex === child.startIndex)
      return 'splits a word where bash would not';
    previous = child;
    const word = child.type === 'command_name' && child.childCount === 1 ? child.firstChild! : child;
    const literal = literalWord(word);
    if ('why' in literal) return literal.why;
    words.push(literal);
  }
  return programWhy(words);
};

const statementWhy = (node: Node): string | null => {
  switch (node.type) {
    case 'program':
    case 'list':
    case 'pipeline':
    case 'negated_command':
    case 'redirected_statement':
      return firstWhy(node.children, (child) => {
        if (child.type.endsWith('_redirect')) return redirectWhy(child);
        if (child.isNamed) return statementWhy(child);
        if (SEPARATORS.has(child.type)) return null;
        return child.type === '&' ? 'runs a command in the background' : `uses "${child.text}"`;
      });
    case 'command':
      return commandWhy(node);
    default:
      return STATEMENTS[node.type] ?? `uses ${node.type.replaceAll('_', ' ')}`;
  }
};

/** Nodes whose text is read whole, whitespace included. */
const ATOMS = new Set(['string', 'raw_string', 'ansi_c_string', 'translated_string']);

// The grammar skips some text bash reads, a backslash-newline inside a word above all (`-de\⏎lete`
// is `-delete` to bash, `-de` and `lete` to the tree): between tokens only blanks may be left out.
const skippedWhy = (root: Node, line: string): string | null => {
  let end = 0;
  const skipped = (until: number): string | null => {
    const gap = line.slice(end, until);
    if (/^[ \t\n]*$/.test(gap)) return null;
    return gap.includes('\\')
      ? 'continues a line with a backslash'
      : `has text the parser skipped (${gap.trim()})`;
  };
  const visit = (node: Node): string | null => {
    if (node.childCount > 0 && !ATOMS.has(node.type)) return firstWhy(node.children, visit);
    const why = skipped(node.startIndex);
    end = node.endIndex;
    return why;
  };
  return visit(root) ?? skipped(line.length);
};

const verdict = (root: Node, line: string): ShellVerdict => {
  const why = root.hasError
    ? 'does not parse'
    : root.namedChildCount === 0
      ? 'runs nothing'
      : (statementWhy(root) ?? skippedWhy(root, line));
  return why === null ? { readOnly: true } : { readOnly: false, why };
};

/** Classifies a shell command line: read-only only when bash's grammar shows nothing that could write or run more. */
export const classifyShell = async (line: string): Promise<ShellVerdict> => {
  // bash reads a carriage return or a NUL where the grammar may see a blank.
  if (/[^\P{Cc}\t\n]/u.test(line)) return { readOnly: false, why: 'has a control character' };
  try {
    return (
      (await readBash(line, (root) => verdict(root, line))) ?? { readOnly: false, why: 'does not parse' }
    );
  } catch (error) {
    return { readOnly: false, why: `could not be classified (${(error as Error).message})` };
  }
};
