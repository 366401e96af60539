import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DIFF_LIMIT,
  PLAN_TEXT_LIMIT,
  type PlanSnapshot,
  planChange,
  UNCHANGED_PLAN,
} from '../../machines/plan-diff.js';
import { prng } from '../../sim/prng.js';

const plan = (text: string | null): PlanSnapshot => ({
  sha256: text === null ? null : createHash('sha256').update(text).digest('hex'),
  text: text !== null && Buffer.byteLength(text) > PLAN_TEXT_LIMIT ? null : text,
  size: text === null ? null : Buffer.byteLength(text),
});

const lines = (...items: string[]) => `${items.join('\n')}\n`;

describe('what became of the plan between a change and an ack', () => {
  it('says an ack with the same plan left it unchanged, with no diff', () => {
    const same = plan(lines('# Plan', '1. Parse'));
    expect(planChange(same, same)).toEqual({
      changed: false,
      added: 0,
      removed: 0,
      diff: null,
      summary: UNCHANGED_PLAN,
    });
    expect(UNCHANGED_PLAN).toBe('acknowledged without changing the plan');
  });

  it('gives one hunk per region that changed, with three lines of context, as diff -u does', () => {
    const before = lines('# Plan', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l');
    const after = lines('# Plan', 'A', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm');
    const change = planChange(plan(before), plan(after));
    expect(change).toMatchObject({ changed: true, added: 2, removed: 1 });
    expect(change.summary).toBe('the plan changed: 2 lines added, 1 removed');
    expect(change.diff).toBe(
      [
        '--- plan.md at the change',
        '+++ plan.md at the ack',
        '@@ -1,5 +1,5 @@',
        ' # Plan',
        '-a',
        '+A',
        ' b',
        ' c',
        ' d',
        '@@ -11,3 +11,4 @@',
        ' j',
        ' k',
        ' l',
        '+m',
      ].join('\n'),
    );
  });

  it('diffs a plan written from nothing, and says when plan.md was deleted', () => {
    expect(planChange(plan(null), plan(lines('# Plan', 'one'))).diff).toBe(
      ['--- plan.md at the change', '+++ plan.md at the ack', '@@ -0,0 +1,2 @@', '+# Plan', '+one'].join(
        '\n',
      ),
    );
    expect(planChange(plan(lines('# Plan')), plan(null))).toMatchObject({
      changed: true,
      diff: null,
      summary: 'the plan changed: plan.md was deleted',
    });
  });

  it('summarises a plan over 64 KiB in words instead of diffing it', () => {
    const big = `${'x'.repeat(PLAN_TEXT_LIMIT)}\n`;
    const change = planChange(plan(lines('# Plan')), plan(big));
    expect(change).toMatchObject({ changed: true, diff: null });
    expect(change.summary).toBe(
      'the plan changed (it is over 64 KiB, so pulse shows no diff: read .pulse/plan.md)',
    );
  });

  it('cuts a long diff at 8 KiB on a line end, saying how many lines were left out', () => {
    const before = lines(...Array.from({ length: 400 }, (_, i) => `step ${i}: keep going`));
    const after = lines(...Array.from({ length: 400 }, (_, i) => `step ${i}: changed course`));
    const { diff, added, removed } = planChange(plan(before), plan(after));
    expect(added).toBe(400);
    expect(removed).toBe(400);
    expect(diff!.length).toBeLessThanOrEqual(DIFF_LIMIT + 80);
    expect(diff!.split('\n').at(-1)).toMatch(/^… \d+ more lines of the diff: read \.pulse\/plan\.md$/);
  });

  it('says when only the bytes changed, not the lines (a final newline)', () => {
    expect(planChange(plan('# Plan\n1. Parse'), plan('# Plan\n1. Parse\n')).summary).toBe(
      'the plan changed in its bytes only (line endings or a final newline)',
    );
  });
});

describe('the diff applies as a patch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pulse-plan-diff-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('turns the plan at the change into the plan at the ack under patch(1), for 40 random edits', () => {
    const next = prng(26);
    const random = { int: (below: number) => Math.floor(next() * below) };
    const words = ['parse', 'test', 'ship', 'ask the user', 'refactor', 'measure', ''];
    for (let round = 0; round < 40; round++) {
      const before = Array.from({ length: 5 + random.int(30) }, () => words[random.int(words.length)]!);
      const after = [...before];
      for (let edit = 1 + random.int(6); edit > 0; edit--) {
        const at = random.int(after.length + 1);
        const kind = random.int(3);
        if (kind === 0) after.splice(at, 1);
        else if (kind === 1) after.splice(at, 0, `new step ${round}.${edit}`);
        else after[Math.min(at, after.length - 1)] = `changed ${round}.${edit}`;
      }
      const [a, b] = [lines(...before), lines(...after)];
      const { diff } = planChange(plan(a), plan(b));
      if (a === b) continue;
      writeFileSync(join(dir, 'plan.md'), a);
      execFileSync('patch', ['--quiet', '-o', join(dir, 'patched.md'), join(dir, 'plan.md')], {
        input: `${diff}\n`,
      });
      expect(readFileSync(join(dir, 'patched.md'), 'utf8'), `round ${round}:\n${diff}`).toBe(b);
    }
  });
});
