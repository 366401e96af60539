import { describe, expect, it } from 'vitest';
import { classifyShell } from '../../src/hooks/read-only-shell.js';

// Random command lines composed from pieces whose effect is known, checked against the classifier:
// a line with any unsafe piece (a writer, a write redirection, an expansion that runs, an
// assignment, a program that is no reader) is held, and a line of reading pieces runs. The seed is printed; replay a
// failing run with PULSE_FUZZ_SEED=<seed>.
const seed = Number(process.env.PULSE_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32));
const LINES = 400;

/** mulberry32: small, seeded, good enough to pick pieces. */
const prng = (state: number) => (): number => {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
};

interface Piece {
  text: string;
  unsafe: boolean;
}

const reading = (...texts: string[]): Piece[] => texts.map((text) => ({ text, unsafe: false }));
const unsafe = (...texts: string[]): Piece[] => texts.map((text) => ({ text, unsafe: true }));

/** Readers that take any further operand. */
const OPEN_READERS = reading('cat', 'head -5', 'ls -la', 'grep -rn foo', 'wc -l', 'echo', 'diff -u', 'jq .a');
/** Readers whose arguments are complete. */
const CLOSED_READERS = reading(
  'git log --oneline -3',
  'git status --short',
  'git diff HEAD~1 -- src',
  'rg -n "foo(bar)" src',
  "find . -name '*.ts' -not -path './node_modules/*'",
  'sort -u f',
  'uniq -c f',
  'tree -L 2',
  'pulse status',
);
const WRITERS = unsafe(
  'rm -rf x',
  'mv a b',
  'cp a b',
  'tee f',
  'npm test',
  'node -e 1',
  'python -c 1',
  "sh -c 'cat x'",
  'bash -c ls',
  'sed -i s/a/b/ f',
  'eval ls',
  'env rm x',
  'xargs rm',
  'sudo cat f',
  'touch f',
  './cat f',
  'git commit -m x',
  'git -c core.pager=sh log',
  'git log --output=f',
  'git diff --ext-diff',
  'git grep -O vim x',
  'rg --pre sh x',
  'find . -delete',
  'find . -de\\\nlete',
  "rg $'\\x2d-pre' sh x",
  'find . -exec rm {} \\;',
  'sort -o f x',
  'tree -o f',
  'uniq a b',
  'printf -v X y',
  'file -C -m x',
  'less +!cmd f',
);
const ARGUMENTS = [
  ...reading('f', "'a b'", '"c d"', "$'\\x41'", 'src/x.ts', '-n', '--', '@{u}'),
  ...unsafe(
    '$(rm x)',
    '`rm x`',
    '"$(rm x)"',
    '<(rm x)',
    '>(tee f)',
    '$((1))',
    '$[x]',
    '$X',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
    '${X}',
    '"$X"',
    '{a,b}',
  ),
];
const REDIRECTIONS = [
  ...reading('2>/dev/null', '>/dev/null', '2>&1', '>&2', '&>/dev/null', '< f'),
  ...unsafe('> f', '>> f', '>| f', '&> f', '2> f', '>&2file', '<> f', '<<< x'),
];
const PREFIXES = unsafe('X=1 ', 'X=/cat ', 'command ', 'time ');
const SEPARATORS = [...reading('; ', ' && ', ' || ', ' | ', '\n'), ...unsafe(' & ')];

const composer = (random: () => number) => {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chance = (p: number) => random() < p;
  const command = (): Piece[] => {
    const pieces: Piece[] = [];
    if (chance(0.1)) pieces.push(pick(PREFIXES));
    const open = chance(0.5);
    pieces.push(pick(chance(0.3) ? WRITERS : open ? OPEN_READERS : CLOSED_READERS));
    const argumentCount = open ? Math.floor(random() * 3) : 0;
    for (let i = 0; i < argumentCount; i++)
      pieces.push(pick(chance(0.8) ? ARGUMENTS.slice(0, 8) : ARGUMENTS));
    if (chance(0.3)) pieces.push(pick(REDIRECTIONS));
    return pieces;
  };
  return (): Piece[] => {
    const pieces = command();
    const count = 1 + Math.floor(random() * 3);
    for (let i = 0; i < count; i++)
      pieces.push(pick(chance(0.9) ? SEPARATORS.slice(0, 5) : SEPARATORS), ...command());
    return pieces;
  };
};

const joined = (pieces: readonly Piece[]): string =>
  pieces
    .map((piece) => piece.text)
    .reduce((line, text) => (/^[;\n &|]/.test(text) ? line + text : `${line} ${text}`));

describe(`random command lines (seed ${seed}; replay with PULSE_FUZZ_SEED=${seed})`, () => {
  const random = prng(seed);
  const compose = composer(random);
  const lines = Array.from({ length: LINES }, compose).map((pieces) => ({
    line: joined(pieces),
    unsafe: pieces.some((piece) => piece.unsafe),
  }));

  it('holds every line with an unsafe piece, and runs every line of reading pieces', async () => {
    console.info(`read-only shell fuzz: seed ${seed}, ${LINES} lines`);
    const wrong: string[] = [];
    for (const { line, unsafe } of lines) {
      const verdict = await classifyShell(line);
      if (verdict.readOnly === unsafe) wrong.push(`${JSON.stringify(line)}: ${JSON.stringify(verdict)}`);
    }
    expect(wrong).toEqual([]);
    // Both kinds were drawn, so neither half of the check is empty.
    expect(lines.filter((l) => l.unsafe).length).toBeGreaterThan(LINES / 4);
    expect(lines.filter((l) => !l.unsafe).length).toBeGreaterThan(LINES / 20);
  });

  it('holds a reading line once a writer or a shell is run after it', async () => {
    const wrong: string[] = [];
    for (const { line } of lines.filter((l) => !l.unsafe)) {
      for (const tail of ['; rm -rf x', ' | sh', ' && $(rm x)', '\nX=1']) {
        if ((await classifyShell(line + tail)).readOnly) wrong.push(JSON.stringify(line + tail));
      }
      if ((await classifyShell(`rm -rf x; ${line}`)).readOnly)
        wrong.push(JSON.stringify(`rm -rf x; ${line}`));
    }
    expect(wrong).toEqual([]);
  });
});
