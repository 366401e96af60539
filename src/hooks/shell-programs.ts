// The programs a command line may run while a replan is pending, and for each one the arguments that
// would make it run another program or write a file. Anything not listed here is held.

const RUNS = 'runs a program';
const WRITES = 'writes a file';

/** Options that run or write: `--long` (also abbreviated, as getopt and git accept) or `-x` (also in a cluster). */
type Options = Readonly<Record<string, string>>;

/** A program that reads, and what would make it do more. */
interface Reader {
  options?: Options;
  /** A rule options cannot say: returns why the arguments are held, or null. */
  check?: (args: readonly string[]) => string | null;
}

/** The first of `options` the arguments give, and what it does. */
const optionIn = (args: readonly string[], options: Options): [string, string] | null => {
  for (const arg of args) {
    // `--` does not end the scan: after an option that takes a value it may be that value.
    if (arg === '--' || !arg.startsWith('-')) continue;
    const name = arg.split('=', 1)[0]!;
    for (const [option, effect] of Object.entries(options)) {
      const hit = option.startsWith('--')
        ? name.startsWith('--') && option.startsWith(name)
        : !arg.startsWith('--') && arg.slice(1).includes(option.slice(1));
      if (hit) return [option, effect];
    }
  }
  return null;
};

const heldOption = (program: string, args: readonly string[], options: Options): string | null => {
  const hit = optionIn(args, options);
  return hit === null ? null : `${program} ${hit[0]} ${hit[1]}`;
};

// less and more run a command from `+!cmd`, `+|cmd` and their key bindings, and write with `-o`:
// they read here only with file names and no options.
const pager =
  (program: string) =>
  (args: readonly string[]): string | null => {
    const option = args.find((arg) => arg.startsWith('-') || arg.startsWith('+'));
    return option === undefined
      ? null
      : `${program} ${option}: its options can run a program or write a file`;
  };

// uniq writes its second operand.
const uniq = (args: readonly string[]): string | null => {
  const dashes = args.indexOf('--');
  const operands = args.filter(
    (arg, i) => (dashes !== -1 && i > dashes) || arg === '-' || !arg.startsWith('-'),
  );
  return operands.length > 1 ? `uniq writes its second operand (${operands[1]})` : null;
};

const FIND_ACTIONS: Options = {
  '-exec': RUNS,
  '-ok': RUNS,
  '-delete': 'deletes files',
  '-fprint': WRITES,
  '-fls': WRITES,
};

const find = (args: readonly string[]): string | null => {
  for (const arg of args) {
    const action = Object.keys(FIND_ACTIONS).find((name) => arg.startsWith(name));
    if (action !== undefined) return `find ${arg} ${FIND_ACTIONS[action]}`;
  }
  return null;
};

/** Options every reading git subcommand is held for (a diff or grep driver, a pager, a file written). */
const GIT_OPTIONS: Options = {
  '--output': WRITES,
  '--ext-diff': RUNS,
  '--textconv': RUNS,
  '--filters': RUNS,
  '--open-files-in-pager': RUNS,
  '-O': RUNS,
};

/** Global options before the subcommand that change nothing but how git reads. */
const GIT_GLOBALS = new Set([
  '--no-pager',
  '-P',
  '--no-optional-locks',
  '--literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--no-replace-objects',
]);

const BRANCH_LISTING = new Set([
  '-a',
  '--all',
  '-r',
  '--remotes',
  '-v',
  '-vv',
  '--verbose',
  '--show-current',
]);

/** Git subcommands that read, with a rule for those whose other forms write. */
const GIT_SUBCOMMANDS: Readonly<Record<string, (args: readonly string[]) => string | null>> = {
  status: () => null,
  diff: () => null,
  log: () => null,
  show: () => null,
  blame: () => null,
  'rev-parse': () => null,
  'rev-list': () => null,
  'ls-files': () => null,
  'ls-tree': () => null,
  'cat-file': () => null,
  'merge-base': () => null,
  'show-ref': () => null,
  grep: () => null,
  describe: () => null,
  // `git branch NAME` creates a branch: only listing forms, and patterns after --list.
  branch: (args) => {
    const listing = args.includes('--list') || args.includes('-l');
    const other = args.find(
      (arg) =>
        arg !== '--list' && arg !== '-l' && !BRANCH_LISTING.has(arg) && !(listing && !arg.startsWith('-')),
    );
    return other === undefined ? null : `git branch ${other} is not a listing`;
  },
  remote: (args) => {
    const other = args.find((arg) => arg !== '-v' && arg !== '--verbose');
    return other === undefined ? null : `git remote ${other} is not a listing`;
  },
};

const git = (args: readonly string[]): string | null => {
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    const arg = args[i]!;
    if (arg === '-C') i++;
    else if (!GIT_GLOBALS.has(arg)) {
      // -c sets any configuration (core.pager, diff.external), -p starts a pager, --git-dir and
      // --exec-path point git at another configuration or other programs.
      return `git ${arg} can make git run a program`;
    }
  }
  const [subcommand, ...rest] = args.slice(i);
  const rule =
    subcommand !== undefined && Object.hasOwn(GIT_SUBCOMMANDS, subcommand)
      ? GIT_SUBCOMMANDS[subcommand]
      : undefined;
  if (rule === undefined) return `git ${subcommand ?? 'without a subcommand'} is not a reading subcommand`;
  return heldOption(`git ${subcommand}`, rest, GIT_OPTIONS) ?? rule(rest);
};

const READERS: Readonly<Record<string, Reader>> = {
  cat: {},
  head: {},
  tail: {},
  ls: {},
  pwd: {},
  cd: {},
  true: {},
  grep: {},
  egrep: {},
  fgrep: {},
  wc: {},
  stat: {},
  diff: {},
  cmp: {},
  which: {},
  echo: {},
  basename: {},
  dirname: {},
  realpath: {},
  readlink: {},
  du: {},
  df: {},
  jq: {},
  nl: {},
  cut: {},
  tr: {},
  less: { check: pager('less') },
  more: { check: pager('more') },
  // file -z may run the system's decompressors, as rg -z does.
  file: {
    options: {
      '-C': WRITES,
      '--compile': WRITES,
      '-z': RUNS,
      '-Z': RUNS,
      '--uncompress': RUNS,
      '--uncompress-noreport': RUNS,
    },
  },
  printf: { options: { '-v': 'sets a variable' } },
  rg: {
    options: { '--pre': RUNS, '--pre-glob': RUNS, '--search-zip': RUNS, '-z': RUNS, '--hostname-bin': RUNS },
  },
  sort: {
    options: {
      '-o': WRITES,
      '--output': WRITES,
      '-T': WRITES,
      '--temporary-directory': WRITES,
      '--compress-program': RUNS,
    },
  },
  tree: { options: { '-o': WRITES, '-R': WRITES } },
  uniq: { check: uniq },
  find: { check: find },
  git: { check: git },
  pulse: { check: (args) => (args[0] === 'status' ? null : `pulse ${args[0] ?? ''} is not pulse status`) },
};

/** Where a program named by its path is still the listed program: the system's own folders. */
const SYSTEM_PATH = /^\/(?:usr\/(?:local\/)?)?bin\/([^/]+)$/;

/** An argument as the program will see it, and whether bash may expand it into file names. */
export interface Argument {
  value: string;
  glob: boolean;
}

/** Why a simple command is held (its program is not a listed reader, or an argument makes it write or run), or null. */
export const programWhy = ([name, ...args]: readonly Argument[]): string | null => {
  if (name === undefined) return 'runs no program';
  if (name.glob) return 'globs the program name';
  const program = name.value.includes('/') ? SYSTEM_PATH.exec(name.value)?.[1] : name.value;
  if (program === undefined) return `runs a program by its path (${name.value})`;
  const reader = Object.hasOwn(READERS, program) ? READERS[program]! : undefined;
  if (reader === undefined) return `${program} is not a known reader`;
  if (reader.options === undefined && reader.check === undefined) return null;
  // A file named `--pre=sh` or `-delete` would reach these programs as an option.
  const globbed = args.find((arg) => arg.glob);
  if (globbed !== undefined) return `${program} ${globbed.value}: a glob could expand to an option`;
  const values = args.map((arg) => arg.value);
  return (reader.options && heldOption(program, values, reader.options)) ?? reader.check?.(values) ?? null;
};
