import { describe, expect, it } from 'vitest';
import { CHANGES_KEPT, type FleetReceiptSeen, RECEIPTS_KEPT } from '../../machines/fleet-context.js';
import { joinBackoffStep, withChange, withReceipt } from '../../machines/fleet-decisions.js';

const receipt = (n: number): FleetReceiptSeen => ({
  receiptId: `frc_${n}`,
  steerId: 'fst_1',
  machine: 'vm (0123456789ab)',
  agent: 'a',
  label: 'Codex',
  at: '2026-12-03T00:00:00Z',
  plan_changed: false,
  added: 0,
  removed: 0,
  summary: 'unchanged',
  diff: null,
});

describe('the fleet actor’s decisions', () => {
  it('keeps a receipt heard twice once, and only the latest past the bound', () => {
    const once = withReceipt(withReceipt([], receipt(1)), receipt(1));
    expect(once).toHaveLength(1);
    let many: FleetReceiptSeen[] = [];
    for (let n = 0; n < RECEIPTS_KEPT + 5; n++) many = withReceipt(many, receipt(n));
    expect(many).toHaveLength(RECEIPTS_KEPT);
    expect(many[0]!.receiptId).toBe('frc_5');
  });

  it('merges what a change learns later (its sequence, its event) and keeps only the latest changes', () => {
    const change = {
      steerId: 'fst_1',
      file: 'guidance' as const,
      seq: null,
      machine: 'vm',
      at: '',
      eventId: null,
    };
    const known = withChange(withChange([change], { ...change, seq: 7 }), { ...change, eventId: 'evt_1' });
    expect(known).toEqual([{ ...change, seq: 7, eventId: 'evt_1' }]);
    let many = known;
    for (let n = 0; n < CHANGES_KEPT; n++) many = withChange(many, { ...change, steerId: `fst_x${n}` });
    expect(many).toHaveLength(CHANGES_KEPT);
    expect(many.some((c) => c.steerId === 'fst_1')).toBe(false);
  });

  it('starts the join backoff again from its first step after a good connection, and climbs without one', () => {
    expect(joinBackoffStep(5, true)).toBe(0);
    expect(joinBackoffStep(5, false)).toBe(5);
  });
});
