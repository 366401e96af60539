// Command lines that made the shell judge, or the parser under it, take time growing faster than
// the line: each shape, repeated to any length. Found by hand and by a search over repeated
// tokens; before the judge was bounded, `cat {a,{a,…` of 6,000 characters took it 3–7 s.

/** A pathological shape: its name, and the line of about `length` characters. */
export interface ShellShape {
  name: string;
  line: (length: number) => string;
}

const repeat =
  (prefix: string, unit: string, suffix = '') =>
  (length: number) =>
    prefix +
    unit.repeat(Math.max(1, Math.floor((length - prefix.length - suffix.length) / unit.length))) +
    suffix;

/** Each shape, the first. */
export const SHELL_SHAPES: readonly ShellShape[] = [
  { name: 'nested braces, never closed (the issue)', line: repeat('cat ', '{a,') },
  { name: 'nested braces, closed', line: (n) => `cat ${'{a,'.repeat(n / 6)}${'}'.repeat(n / 6)}` },
  { name: 'a run of backslashes', line: repeat('cat ', '\\') },
  { name: 'dollars in double quotes', line: repeat('cat "', '$', '"') },
  { name: 'escaped dollars in double quotes', line: repeat('cat "', '\\$', '"') },
  { name: 'backquotes in double quotes', line: repeat('cat "', '`', '"') },
  { name: 'backslashes in double quotes', line: repeat('cat "', '\\', 'x"') },
  { name: 'nested command substitutions', line: (n) => `cat ${'$('.repeat(n / 4)}${')'.repeat(n / 4)}` },
  { name: 'unclosed command substitutions', line: repeat('cat ', '$(') },
  { name: 'a run of double quotes', line: repeat('cat ', '"') },
  { name: 'single-quoted words joined', line: repeat('cat ', "'a'") },
  { name: 'unclosed arithmetic', line: repeat('cat ', '((') },
  { name: 'a long here-document', line: repeat('cat <<EOF\n', 'x\n', 'EOF') },
  { name: 'many here-documents', line: repeat('cat ', '<<E ') },
  { name: 'one character', line: repeat('', 'a') },
  { name: 'a long pipeline of non-commands', line: repeat('', 'a|') },
  { name: 'a run of <', line: repeat('', '<') },
  { name: 'a run of )', line: repeat('', ')') },
  { name: 'negated pipes', line: repeat('', '!|') },
  { name: 'unbalanced subshells', line: repeat('', '(()') },
  { name: 'a long chain of reads', line: repeat('', 'cat a && ', 'cat a') },
  { name: 'a reader with many words', line: repeat('cat', ' a') },
  { name: 'an open brace run', line: repeat('cat ', '{') },
  { name: 'a dollar-brace run', line: repeat('cat ', '${') },
  { name: 'an ANSI-C string of backslashes', line: repeat("cat $'", '\\\\', "'") },
];
