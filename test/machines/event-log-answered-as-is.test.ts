import { describe, expect, it } from 'vitest';
import { initialEventLogContext } from '../../machines/event-log-context.js';
import { reconcileAnsweredAsIs } from '../../machines/event-log-decisions.js';
import { NO_FAULTS } from '../../machines/log-faults.js';

const settled = { ...initialEventLogContext(), scansRequested: 3, scansCompleted: 3 };
const still = () => true;

describe('a reconcile answered as-is (no scan, no count)', () => {
  it('is so only with still files, every request answered, nothing troubled or missing', () => {
    expect(reconcileAnsweredAsIs(settled, still)).toBe(true);
  });

  it('is not so when a file changed, a request waits, a fault or unsaved hashes need a look, or a file is away', () => {
    expect(reconcileAnsweredAsIs(settled, () => false)).toBe(false);
    expect(reconcileAnsweredAsIs({ ...settled, scansRequested: 4 }, still)).toBe(false);
    expect(reconcileAnsweredAsIs({ ...settled, hashesUnsaved: true }, still)).toBe(false);
    expect(reconcileAnsweredAsIs({ ...settled, faults: { ...NO_FAULTS, append: 'disk full' } }, still)).toBe(
      false,
    );
    expect(reconcileAnsweredAsIs({ ...settled, away: ['guidance.md'] }, still)).toBe(false);
  });

  it('asks for the stat check only once the context allows an answer as-is', () => {
    let asked = 0;
    const counting = () => {
      asked += 1;
      return true;
    };
    reconcileAnsweredAsIs({ ...settled, scansRequested: 4 }, counting);
    expect(asked).toBe(0);
    reconcileAnsweredAsIs(settled, counting);
    expect(asked).toBe(1);
  });
});
