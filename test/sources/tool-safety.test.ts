import { describe, expect, it } from 'vitest';
import { hintsOf, toolSafety } from '../../src/sources/client/tool-safety.js';

/*
 * What pulse makes of a tool's annotations, case by case, beside the end-to-end test
 * (test/e2e/source-safety.test.ts) that reads them from real servers.
 */

const source = { name: 'mail', server: 'mailbox', tool: 'search', allowSideEffects: false };
const verdict = (annotations: unknown, allow = false) =>
  toolSafety({ ...source, allowSideEffects: allow }, hintsOf(annotations)).verdict;

describe('tool safety from annotations', () => {
  it('polls a tool that says it only reads, and refuses one that says it writes or destroys', () => {
    expect(verdict({ readOnlyHint: true })).toBe('read_only');
    expect(verdict({ readOnlyHint: false })).toBe('refused');
    expect(verdict({ destructiveHint: true })).toBe('refused');
    expect(verdict({ readOnlyHint: false, destructiveHint: false })).toBe('refused');
  });

  it('refuses a tool that says both that it only reads and that it destroys: what it does is unknown, so fail closed', () => {
    expect(verdict({ readOnlyHint: true, destructiveHint: true })).toBe('refused');
  });

  it('warns about a tool that does not say it only reads, whatever else it says', () => {
    expect(verdict(undefined)).toBe('undeclared');
    expect(verdict({})).toBe('undeclared');
    expect(verdict({ title: 'Search mail', idempotentHint: true })).toBe('undeclared');
    expect(verdict({ destructiveHint: false })).toBe('undeclared');
    // A hint that is not a boolean says nothing.
    expect(verdict({ readOnlyHint: 'true' })).toBe('undeclared');
    expect(hintsOf({ readOnlyHint: 'true', openWorldHint: false })).toEqual({ openWorldHint: false });
  });

  it('polls a writing tool when the source allows side effects, saying so', () => {
    const allowed = toolSafety({ ...source, allowSideEffects: true }, { destructiveHint: true });
    expect(allowed).toEqual({
      hints: { destructiveHint: true },
      verdict: 'allowed',
      message:
        'tool "search" of server "mailbox" says it is destructive (destructiveHint: true); source "mail" polls it all the same: it says "allow_side_effects": true.',
    });
    expect(verdict({ readOnlyHint: true }, true), 'a read-only tool needs no allowance').toBe('read_only');
  });
});
