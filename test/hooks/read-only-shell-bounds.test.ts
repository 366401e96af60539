import { describe, expect, it } from 'vitest';
import { deadlineIn } from '../../src/hooks/deadline.js';
import { classifyShell, MAX_JUDGED_CHARS } from '../../src/hooks/read-only-shell.js';
import { SHELL_SHAPES } from '../support/shell-shapes.js';

// The judge is bounded: its work grows with the line, a line too long is held unread, and a line it
// cannot judge by its deadline is held. Work is counted with a clock that ticks once a read: the
// judge reads its deadline once per 100 parser operations and once per node it walks.

/** The verdict on `line` and the steps it took, with no deadline. */
const counted = async (line: string) => {
  let steps = 0;
  const verdict = await classifyShell(
    line,
    deadlineIn(Number.MAX_SAFE_INTEGER, () => steps++),
  );
  return { verdict, steps };
};

describe('the shell judge, bounded', () => {
  it('takes steps in proportion to the line, for every pathological shape up to the limit', async () => {
    for (const { name, line } of SHELL_SHAPES) {
      for (const length of [2000, 6000]) {
        const text = line(length);
        const { steps } = await counted(text);
        expect(steps, `${name}, ${text.length} characters`).toBeLessThanOrEqual(2 * text.length + 100);
      }
    }
  }, 120_000);

  it('answers the 6,000-character lines of every shape in well under a second each', async () => {
    await classifyShell('cat a');
    for (const { name, line } of SHELL_SHAPES) {
      const text = line(6000);
      const started = performance.now();
      const verdict = await classifyShell(text);
      const took = performance.now() - started;
      // Generous: about 50 ms here; before the fix the first shape took 3–7 s, and the parser's worst ones stop at 500 ms.
      expect(took, `${name}: ${JSON.stringify(verdict)}`).toBeLessThan(
        name.includes('(the issue)') ? 1000 : 2000,
      );
    }
  });

  it('holds a line over the limit unread, and judges one at the limit', async () => {
    const atLimit = `cat${' a'.repeat((MAX_JUDGED_CHARS - 3) / 2)}`.padEnd(MAX_JUDGED_CHARS, ' ');
    expect(atLimit).toHaveLength(MAX_JUDGED_CHARS);
    expect(await classifyShell(atLimit)).toEqual({ readOnly: true });
    const over = await counted(`${atLimit}a`);
    expect(over.verdict).toEqual({
      readOnly: false,
      why: `is too long to judge (${MAX_JUDGED_CHARS + 1} characters; pulse judges at most ${MAX_JUDGED_CHARS})`,
    });
    // One read of the clock: the deadline's own start.
    expect(over.steps).toBe(1);
    const mebibyte = await classifyShell('cat '.padEnd(1 << 20, 'a'));
    expect(mebibyte).toMatchObject({ readOnly: false, why: expect.stringMatching(/^is too long to judge/) });
  });

  it('holds a read-only line it cannot judge by its deadline, and runs it given the time', async () => {
    const chain = `${'cat a && '.repeat(300)}cat a`;
    expect((await counted(chain)).verdict).toEqual({ readOnly: true });
    let steps = 0;
    const late = await classifyShell(
      chain,
      deadlineIn(200, () => steps++),
    );
    expect(late).toEqual({ readOnly: false, why: 'could not be judged within 500 ms' });
    expect(steps).toBeLessThan(210);
    expect(await classifyShell('cat a', deadlineIn(0))).toEqual({
      readOnly: false,
      why: 'could not be judged within 500 ms',
    });
  });

  it('stops parsing at the first syntax error, where the parser would spend the most', async () => {
    const { verdict, steps } = await counted(')'.repeat(8000));
    expect(verdict).toEqual({ readOnly: false, why: 'does not parse' });
    expect(steps).toBeLessThan(10);
  });

  it('walks a chain of a thousand reads, nested a level each, without recursion', async () => {
    const chain = `${'cat a && '.repeat(900)}cat a`;
    expect(chain.length).toBeLessThanOrEqual(MAX_JUDGED_CHARS);
    expect((await counted(chain)).verdict).toEqual({ readOnly: true });
    expect((await counted(`${'cat a && '.repeat(900)}rm a`)).verdict).toEqual({
      readOnly: false,
      why: 'rm is not a known reader',
    });
  });
});
