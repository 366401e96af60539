import type { Node } from 'web-tree-sitter';

/** A word as the program receives it, and whether bash may turn it into file names; or why it is neither. */
export type Word = { value: string; glob: boolean } | { why: string };

/** What a word part that is not a literal would do, by node kind. */
const EXPANSIONS: Readonly<Record<string, string>> = {
  command_substitution: 'runs a command substitution',
  process_substitution: 'runs a process substitution',
  arithmetic_expansion: 'runs an arithmetic expansion',
  simple_expansion: 'expands a variable',
  expansion: 'expands a variable',
  brace_expression: 'uses brace expansion',
  translated_string: 'uses a $"…" string',
};

/** Why a node is not a literal word part. */
export const expansionWhy = (node: Node): string =>
  EXPANSIONS[node.type] ?? `uses ${node.isNamed ? node.type.replaceAll('_', ' ') : `"${node.text}"`}`;

// A literal part is kept with its "shape": the text with every quoted or escaped character replaced
// by `_`, so that globs, braces and stray `$` are looked for only where bash would see them.
interface Part {
  value: string;
  shape: string;
}

const quoted = (value: string): Part => ({ value, shape: '_'.repeat(value.length) });

const unquoted = (text: string): Part => {
  let value = '';
  let shape = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\') {
      value += c;
      shape += c;
    } else if (text[i + 1] !== '\n' && i + 1 < text.length) {
      value += text[++i];
      shape += '_';
    } else i++;
  }
  return { value, shape };
};

/** Whether double-quoted text has a `$` or a backquote no backslash escapes: a scan, not a pattern that backtracks. */
const expandsInQuotes = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '$' || c === '`') return true;
  }
  return false;
};

// Inside double quotes a backslash escapes only these, and a backslash-newline disappears.
const doubleQuoted = (text: string): Part | null =>
  expandsInQuotes(text)
    ? null
    : quoted(text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c)));

const ANSI_C_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

// bash's $'…': the escapes decoded, and cut at the first NUL as bash cuts it, so `$'\x2d-pre'`
// is seen as the `--pre` it is.
const ansiC = (text: string): Part => {
  const code = (digits: string, base: number): string => {
    const point = Number.parseInt(digits, base);
    return point <= 0x10ffff ? String.fromCodePoint(point) : '\ufffd';
  };
  const value = text.replace(
    /\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|c(.)|(.))/gs,
    (whole, octal?: string, hex?: string, u?: string, bigU?: string, control?: string, other?: string) => {
      if (octal !== undefined) return code(octal, 8);
      const digits = hex ?? u ?? bigU;
      if (digits !== undefined) return code(digits, 16);
      if (control !== undefined) return String.fromCharCode(control.charCodeAt(0) & 0x1f);
      if (other !== undefined && other in ANSI_C_ESCAPES) return ANSI_C_ESCAPES[other]!;
      return `\\'"?`.includes(other!) ? other! : whole;
    },
  );
  return quoted(value.split('\0')[0]!);
};

const part = (node: Node): Part | string => {
  switch (node.type) {
    case 'word':
    case 'number':
      return unquoted(node.text);
    case 'raw_string':
      return quoted(node.text.slice(1, -1));
    case 'ansi_c_string':
      return ansiC(node.text.slice(2, -1));
    case 'string': {
      const inner = node.children.find((child) => child.type !== '"' && child.type !== 'string_content');
      if (inner !== undefined) return expansionWhy(inner);
      return doubleQuoted(node.text.slice(1, -1)) ?? 'expands `$` or a backquote inside double quotes';
    }
    case 'concatenation': {
      const parts: Part[] = [];
      let end = node.startIndex;
      for (const child of node.children) {
        if (child.startIndex !== end) return 'joins words where bash would not';
        end = child.endIndex;
        const next = part(child);
        if (typeof next === 'string') return next;
        parts.push(next);
      }
      return { value: parts.map((p) => p.value).join(''), shape: parts.map((p) => p.shape).join('') };
    }
    default:
      return expansionWhy(node);
  }
};

/**
 * Whether bash would expand braces in a word's shape: a `{`, later a `,` or `..`, later a `}`. The
 * earliest of each is the one to look at, so three scans do what `/\{.*(?:,|\.\.).*\}/` did by
 * backtracking from every brace (`cat {a,{a,…` of 6,000 characters took seconds).
 */
const bracesExpand = (shape: string): boolean => {
  const open = shape.indexOf('{');
  if (open === -1) return false;
  const comma = shape.indexOf(',', open + 1);
  const dots = shape.indexOf('..', open + 1);
  const after = Math.min(comma === -1 ? Infinity : comma + 1, dots === -1 ? Infinity : dots + 2);
  return after !== Infinity && shape.indexOf('}', after) !== -1;
};

/** The literal value of a word node: plain, quoted, escaped or `$'…'` text, and nothing that expands. */
export const literalWord = (node: Node): Word => {
  const result = part(node);
  if (typeof result === 'string') return { why: result };
  const { value, shape } = result;
  if (/[$`]/.test(shape)) return { why: 'expands `$` or a backquote' };
  if (/[\s|&;<>()]/.test(shape)) return { why: 'has a word bash would split' };
  if (bracesExpand(shape)) return { why: 'uses brace expansion' };
  return { value, glob: /[*?[]/.test(shape) };
};
