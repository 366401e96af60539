import { basename } from 'node:path';

// While a replan is pending, a shell command runs only when it clearly just reads. "Clearly" is
// deliberately narrow: every command of a list or pipeline must be a known reader, with no output
// redirection and no command substitution. Anything else is held, and the agent can read with
// its own read tools instead.

/** Commands that read and print, and write nothing whatever their arguments. */
const READERS = new Set([
  'cat',
  'head',
  'tail',
  'less',
  'more',
  'ls',
  'pwd',
  'cd',
  'grep',
  'egrep',
  'fgrep',
  'wc',
  'stat',
  'file',
  'diff',
  'cmp',
  'which',
  'echo',
  'printf',
  'basename',
  'dirname',
  'realpath',
  'readlink',
  'du',
  'df',
  'jq',
  'nl',
  'cut',
  'tr',
  'true',
]);

/** Git subcommands that only read the repository. */
const GIT_READERS = new Set([
  'status',
  'diff',
  'log',
  'show',
  'blame',
  'rev-parse',
  'ls-files',
  'grep',
  'describe',
]);

/** `find` actions that write or run something. */
const FIND_WRITERS = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fprint',
  '-fprint0',
  '-fprintf',
  '-fls',
]);

/** Redirections that write nothing the agent could care about: to /dev/null, or one stream into another. */
const HARMLESS_REDIRECTION = /\d*>&\d+|&?\d*>{1,2}\s*\/dev\/null(?=\s|$|[;&|])/g;

/**
 * Splits a command line into simple commands (their words), honouring quotes; null when it holds
 * something that could write or run more than it shows: `>` redirection, `` ` ``, `$(`, `<(`, `>(`.
 */
const simpleCommands = (line: string): string[][] | null => {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let quote: '"' | "'" | null = null;
  const endWord = () => {
    if (word !== '') words.push(word);
    word = '';
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (c === '`' || (c === '$' && line[i + 1] === '(')) return null;
    if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length) word += line[++i];
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '\\' && i + 1 < line.length) word += line[++i];
    else if (c === '>' || ((c === '<' || c === '>') && line[i + 1] === '(')) return null;
    else if (c === ';' || c === '|' || c === '&' || c === '\n') endCommand();
    else if (c === ' ' || c === '\t') endWord();
    else word += c;
  }
  if (quote !== null) return null;
  endCommand();
  return commands;
};

const readsOnly = ([program, ...args]: string[]): boolean => {
  const name = basename(program!);
  if (READERS.has(name)) return true;
  if (name === 'rg') return !args.some((a) => a.startsWith('--pre'));
  if (name === 'git') {
    return (
      GIT_READERS.has(args.find((a) => !a.startsWith('-')) ?? '') &&
      !args.some((a) => a.startsWith('--output'))
    );
  }
  if (name === 'find') return !args.some((a) => FIND_WRITERS.has(a));
  if (name === 'pulse') return args[0] === 'status';
  return false;
};

/** True when every command in the line is a known reader and nothing is redirected into a file. */
export const isReadOnlyShell = (line: string): boolean => {
  const commands = simpleCommands(line.replace(HARMLESS_REDIRECTION, ' '));
  return commands !== null && commands.length > 0 && commands.every(readsOnly);
};
