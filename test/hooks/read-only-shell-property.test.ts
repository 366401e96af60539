import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deadlineIn } from '../../src/hooks/deadline.js';
import { classifyShell, JUDGE_BUDGET_MS, MAX_JUDGED_CHARS } from '../../src/hooks/read-only-shell.js';

// Generated inputs against the judge's bounds: it never throws, always gives a verdict, takes steps
// in proportion to the line and ends within its deadline. The seed fast-check prints replays a failure.

/** Pieces of bash syntax, nested to any depth: the constructs whose parsing or reading could grow badly. */
const { line: nested } = fc.letrec<{ line: string; word: string }>((tie) => ({
  word: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'cat', '-n', '/dev/null', '*', '{', '}', ',', '..', '\\', '$', '`', '"', "'", '\n'),
    fc.string({ maxLength: 6 }),
    tie('word').map((w) => `"${w}"`),
    tie('word').map((w) => `'${w}'`),
    tie('word').map((w) => `$'${w}'`),
    tie('word').map((w) => `{${w},${w}}`),
    tie('word').map((w) => `\${${w}}`),
    tie('line').map((l) => `$(${l})`),
    tie('line').map((l) => `\`${l}\``),
    tie('line').map((l) => `<(${l})`),
    tie('word').map((w) => `$((${w}))`),
    fc.tuple(tie('word'), tie('word')).map(([a, b]) => a + b),
  ),
  line: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.array(tie('word'), { maxLength: 5 }).map((words) => words.join(' ')),
    fc
      .tuple(tie('line'), fc.constantFrom(' | ', ' && ', ' || ', '; ', ' & ', '\n'), tie('line'))
      .map(([a, op, b]) => a + op + b),
    tie('line').map((l) => `(${l})`),
    tie('line').map((l) => `{ ${l}; }`),
    tie('line').map((l) => `! ${l}`),
    fc
      .tuple(tie('line'), fc.constantFrom('>', '>>', '<', '2>&1', '<<<', '>|', '&>'))
      .map(([l, r]) => `${l} ${r} f`),
    tie('line').map((l) => `cat <<EOF\n${l}\nEOF`),
    tie('line').map((l) => `if ${l}; then ${l}; fi`),
    tie('line').map((l) => `[[ ${l} ]]`),
    tie('line').map((l) => `((${l}))`),
    // A construct repeated, so the shapes reach thousands of characters.
    fc
      .tuple(tie('line'), fc.integer({ min: 2, max: 800 }))
      .map(([l, n]) => l.repeat(Math.min(n, Math.ceil(MAX_JUDGED_CHARS / Math.max(1, l.length))))),
  ),
}));

/** A generated line, cut a little over the limit. */
const shellLine = nested.map((line) => line.slice(0, MAX_JUDGED_CHARS + 100));

/** Any text, up to a little over the limit, some of it a short construct repeated. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 2000 }),
  fc
    .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 3000 }))
    .map(([unit, n]) => unit.repeat(n).slice(0, MAX_JUDGED_CHARS + 100)),
);

const bounded = async (line: string) => {
  let steps = 0;
  const verdict = await classifyShell(
    line,
    deadlineIn(Number.MAX_SAFE_INTEGER, () => steps++),
  );
  expect(typeof verdict.readOnly).toBe('boolean');
  if (!verdict.readOnly) expect(verdict.why).toMatch(/\S/);
  expect(steps).toBeLessThanOrEqual(2 * line.length + 100);
  const started = performance.now();
  const timed = await classifyShell(line);
  // Generous: the deadline plus the parser's longest stretch between its checks, on a loaded machine.
  expect(performance.now() - started).toBeLessThan(JUDGE_BUDGET_MS + 1500);
  // Out of time, a line is held; in time, the same verdict as with no deadline.
  if (timed.readOnly || !timed.why.startsWith('could not be judged')) expect(timed).toEqual(verdict);
};

describe('the shell judge on generated lines', () => {
  it('never throws, takes steps in proportion to any text, and ends by its deadline', async () => {
    await fc.assert(fc.asyncProperty(anyText, bounded), { numRuns: 150 });
  }, 120_000);

  it('does the same on nested and repeated bash constructs', async () => {
    await fc.assert(fc.asyncProperty(shellLine, bounded), { numRuns: 200 });
  }, 120_000);
});
