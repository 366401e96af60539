import type { Node } from 'web-tree-sitter';
import { readBash } from './bash-syntax.js';
import { type Deadline, deadlineIn } from './deadline.js';
import { type Argument, programWhy } from './shell-programs.js';
import { expansionWhy, literalWord } from './shell-word.js';

// While a replan is pending, a shell command runs only when it only reads, and this fails closed:
// bash's grammar parses the line, and it reads only when every command is a simple command of a
// listed program (shell-programs.ts) whose words are literals, with no assignment, no expansion, and
// no redirection but from a file, to /dev/null or between descriptors. Anything else is held, and
// the agent can read with its own read tools. So is a line too long to judge, or not judged in time:
// the judgement is bounded, since the hook that asks must answer within its agent's few seconds.

/** The longest command line judged (UTF-16 units); a longer one is held, unread, while a replan is pending. */
export const MAX_JUDGED_CHARS = 8192;

/** How long one judgement may take, well inside a hook's 8 s; past it the line is held. */
export const JUDGE_BUDGET_MS = 500;

const LATE = `could not be judged within ${JUDGE_BUDGET_MS} ms`;

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

/** Whether a word ends in `{name}`, at its start or after a blank (the grammar's word for bash's `{name}>…`). */
const endsInDescriptorName = (text: string): boolean => {
  if (!text.endsWith('}')) return false;
  const open = text.lastIndexOf('{', text.length - 2);
  return open !== -1 && (open === 0 || /\s/.test(text[open - 1]!)) && !/[\s}]/.test(text.slice(open + 1, -1));
};

/** Why a redirection holds; `before` is the node before it, where a `{name}` lies. */
const redirectWhy = (node: Node, before: Node | null): string | null => {
  if (node.type === 'heredoc_redirect') return 'feeds a here-document';
  if (node.type === 'herestring_redirect') return 'feeds a here-string';
  if (node.type !== 'file_redirect') return expansionWhy(node);
  // `{name}>…` opens a descriptor and assigns its number to `name`.
  if (before !== null && before.endIndex === node.startIndex && endsInDescriptorName(before.text)) {
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

const commandWhy = (node: Node, deadline: Deadline): string | null => {
  const words: Argument[] = [];
  let previous: Node | undefined;
  let before: Node | null = null;
  for (const child of node.children) {
    if (deadline.passed()) return LATE;
    const prior = before;
    before = child;
    if (child.type.endsWith('_redirect')) {
      const why = redirectWhy(child, prior);
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

/** Nodes that only sequence, pipe, negate or redirect the statements in them. */
const CONTAINERS = new Set(['program', 'list', 'pipeline', 'negated_command', 'redirected_statement']);

/** A node to judge, and the node before it in its parent (a redirection's `{name}` lies there). */
interface Step {
  node: Node;
  before: Node | null;
}

const pushChildren = (node: Node, stack: Step[]): void => {
  const { children } = node;
  for (let i = children.length - 1; i >= 0; i--)
    stack.push({ node: children[i]!, before: children[i - 1] ?? null });
};

const stepWhy = ({ node, before }: Step, stack: Step[], deadline: Deadline): string | null => {
  if (node.type.endsWith('_redirect')) return redirectWhy(node, before);
  if (!node.isNamed) {
    if (SEPARATORS.has(node.type)) return null;
    return node.type === '&' ? 'runs a command in the background' : `uses "${node.text}"`;
  }
  if (CONTAINERS.has(node.type)) {
    pushChildren(node, stack);
    return null;
  }
  if (node.type === 'command') return commandWhy(node, deadline);
  return STATEMENTS[node.type] ?? `uses ${node.type.replaceAll('_', ' ')}`;
};

/**
 * The first reason a statement holds, in the order bash reads them, or null. The walk keeps its
 * own stack, since `a && b && …` nests one level per command.
 */
const statementsWhy = (root: Node, deadline: Deadline): string | null => {
  const stack: Step[] = [];
  pushChildren(root, stack);
  for (let step = stack.pop(); step !== undefined; step = stack.pop()) {
    if (deadline.passed()) return LATE;
    const why = stepWhy(step, stack, deadline);
    if (why !== null) return why;
  }
  return null;
};

/** Nodes whose text is read whole, whitespace included. */
const ATOMS = new Set(['string', 'raw_string', 'ansi_c_string', 'translated_string']);

// The grammar skips some text bash reads, a backslash-newline inside a word above all (`-de\⏎lete`
// is `-delete` to bash, `-de` and `lete` to the tree): between tokens only blanks may be left out.
const skippedWhy = (root: Node, line: string, deadline: Deadline): string | null => {
  let end = 0;
  const skipped = (until: number): string | null => {
    const gap = line.slice(end, until);
    if (/^[ \t\n]*$/.test(gap)) return null;
    return gap.includes('\\')
      ? 'continues a line with a backslash'
      : `has text the parser skipped (${gap.trim()})`;
  };
  // Leaf by leaf (an atom counts as one), in order, with a cursor: no recursion, no child arrays.
  const cursor = root.walk();
  try {
    for (;;) {
      if (deadline.passed()) return LATE;
      if (!ATOMS.has(cursor.nodeType) && cursor.gotoFirstChild()) continue;
      const why = skipped(cursor.startIndex);
      end = cursor.endIndex;
      if (why !== null) return why;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return skipped(line.length);
    }
  } finally {
    cursor.delete();
  }
};

const verdict = (root: Node, line: string, deadline: Deadline): string | null =>
  root.hasError
    ? 'does not parse'
    : root.namedChildCount === 0
      ? 'runs nothing'
      : (statementsWhy(root, deadline) ?? skippedWhy(root, line, deadline));

/**
 * Classifies a shell command line: read-only only when bash's grammar shows nothing that could
 * write or run more. A line over `MAX_JUDGED_CHARS`, or not judged by the deadline (`JUDGE_BUDGET_MS`
 * unless given), is not known to be read-only.
 */
export const classifyShell = async (
  line: string,
  deadline: Deadline = deadlineIn(JUDGE_BUDGET_MS),
): Promise<ShellVerdict> => {
  if (line.length > MAX_JUDGED_CHARS) {
    return {
      readOnly: false,
      why: `is too long to judge (${line.length} characters; pulse judges at most ${MAX_JUDGED_CHARS})`,
    };
  }
  // bash reads a carriage return or a NUL where the grammar may see a blank.
  if (/[^\P{Cc}\t\n]/u.test(line)) return { readOnly: false, why: 'has a control character' };
  try {
    const reading = await readBash(line, (root) => verdict(root, line, deadline), deadline);
    const why = 'read' in reading ? reading.read : reading.unread === 'late' ? LATE : reading.unread;
    return why === null ? { readOnly: true } : { readOnly: false, why };
  } catch (error) {
    return { readOnly: false, why: `could not be classified (${(error as Error).message})` };
  }
};
