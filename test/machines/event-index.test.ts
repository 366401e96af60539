import { describe, expect, it } from 'vitest';
import { EventIndex } from '../../machines/event-index.js';
import type { PulseEvent } from '../../machines/pulse-files.js';

const TASK = '.pulse/task.md';
const GUIDANCE = '.pulse/guidance.md';
const CONSTRAINTS = '.pulse/constraints.md';
const PLAN = '.pulse/plan.md';

const event = (n: number, path: string): PulseEvent => ({
  id: `evt_20261129T1015000000${String(n).padStart(2, '0')}Z_0000abcd`,
  timestamp: `2026-11-29T10:15:00.0000${String(n).padStart(2, '0')}Z`,
  kind: 'modified',
  path,
  sha256: String(n % 10).repeat(64),
  size: n,
});

const ids = (events: readonly PulseEvent[]) => events.map((e) => e.id);

// e1 task, e2 guidance, e3 plan, e4 constraints, e5 guidance
const [e1, e2, e3, e4, e5] = [
  event(1, TASK),
  event(2, GUIDANCE),
  event(3, PLAN),
  event(4, CONSTRAINTS),
  event(5, GUIDANCE),
] as [PulseEvent, PulseEvent, PulseEvent, PulseEvent, PulseEvent];
const all = [e1, e2, e3, e4, e5];
const UNKNOWN = 'evt_19990101T000000000000Z_deadbeef';

describe('EventIndex: events after an id', () => {
  const index = EventIndex.from(all);

  it('returns the events after a known id, in log order', () => {
    expect(ids(index.after(e2.id))).toEqual(ids([e3, e4, e5]));
    expect(index.after(e5.id)).toEqual([]);
  });

  it('returns every event for a null or unknown id, as PulseAgent does', () => {
    expect(ids(index.after(null))).toEqual(ids(all));
    expect(ids(index.after(UNKNOWN))).toEqual(ids(all));
  });

  it('counts the events after an id without listing them', () => {
    expect(index.countAfter(e2.id)).toBe(3);
    expect(index.countAfter(e5.id)).toBe(0);
    expect(index.countAfter(null)).toBe(5);
    expect(index.countAfter(UNKNOWN)).toBe(5);
  });

  it('keeps only the last `count` of the events after an id, oldest first', () => {
    expect(ids(index.lastAfter(null, 2))).toEqual(ids([e4, e5]));
    expect(ids(index.lastAfter(UNKNOWN, 2))).toEqual(ids([e4, e5]));
    expect(ids(index.lastAfter(e2.id, 10))).toEqual(ids([e3, e4, e5]));
    expect(ids(index.lastAfter(e1.id, 3))).toEqual(ids([e3, e4, e5]));
    expect(index.lastAfter(e5.id, 10)).toEqual([]);
    expect(index.lastAfter(null, 0)).toEqual([]);
  });

  it('reports size, latest event, lookups and the last event per path', () => {
    expect(index.size).toBe(5);
    expect(index.latest).toEqual(e5);
    expect(index.get(e3.id)).toEqual(e3);
    expect(index.get(UNKNOWN)).toBeUndefined();
    expect(index.has(e4.id)).toBe(true);
    expect(index.has(UNKNOWN)).toBe(false);
    expect(index.lastFor(GUIDANCE)).toEqual(e5);
    expect(index.lastFor('.pulse/other.md')).toBeUndefined();
    expect(ids(index.recent(2))).toEqual(ids([e4, e5]));
    expect(ids(index.recent(50))).toEqual(ids(all));
  });

  it('has no latest event and nothing after any id when empty', () => {
    const empty = EventIndex.empty();
    expect(empty.size).toBe(0);
    expect(empty.latest).toBeUndefined();
    expect(empty.after(null)).toEqual([]);
    expect(empty.countAfter(UNKNOWN)).toBe(0);
  });
});

describe('EventIndex: pendingAfter', () => {
  const index = EventIndex.from(all);

  it('counts every guidance/constraints event when nothing was acknowledged', () => {
    expect(index.pendingAfter(null)).toEqual({
      pendingEventId: e5.id,
      pendingFiles: [GUIDANCE, CONSTRAINTS],
    });
  });

  it('counts only the guidance/constraints events after the acknowledged one', () => {
    expect(index.pendingAfter(e2.id)).toEqual({
      pendingEventId: e5.id,
      pendingFiles: [CONSTRAINTS, GUIDANCE],
    });
    expect(index.pendingAfter(e4.id)).toEqual({ pendingEventId: e5.id, pendingFiles: [GUIDANCE] });
  });

  it('has nothing pending after the latest guidance/constraints event, whatever plan or task events follow', () => {
    expect(index.pendingAfter(e5.id)).toEqual({ pendingEventId: null, pendingFiles: [] });
    const withPlan = EventIndex.from([e1, e2, e3]);
    expect(withPlan.pendingAfter(e2.id)).toEqual({ pendingEventId: null, pendingFiles: [] });
  });

  it('counts everything when the acknowledged id is not in the log', () => {
    expect(index.pendingAfter(UNKNOWN)).toEqual(index.pendingAfter(null));
  });

  it('has nothing pending in a log of plan and task events only', () => {
    expect(EventIndex.from([e1, e3]).pendingAfter(null)).toEqual({ pendingEventId: null, pendingFiles: [] });
  });
});

describe('EventIndex: immutable views', () => {
  it('leaves an older view unchanged by a later append', () => {
    const old = EventIndex.from([e1, e2]);
    const next = old.appended([e3, e4]);
    expect(next.size).toBe(4);
    expect(old.size).toBe(2);
    expect(old.latest).toEqual(e2);
    expect(ids(old.after(null))).toEqual(ids([e1, e2]));
    expect(old.countAfter(e1.id)).toBe(1);
    expect(old.has(e3.id)).toBe(false);
    expect(old.get(e4.id)).toBeUndefined();
    expect(ids(old.lastAfter(null, 10))).toEqual(ids([e1, e2]));
    expect(old.lastFor(PLAN)).toBeUndefined();
    expect(old.pendingAfter(null)).toEqual({ pendingEventId: e2.id, pendingFiles: [GUIDANCE] });
    expect(ids(next.after(e2.id))).toEqual(ids([e3, e4]));
  });

  it('treats an id appended later as unknown in an older view', () => {
    const old = EventIndex.from([e1, e2]);
    old.appended([e3]);
    // e3 is in the shared store, but not in this view: "after e3" means everything, as for any unknown id.
    expect(ids(old.after(e3.id))).toEqual(ids([e1, e2]));
    expect(old.countAfter(e3.id)).toBe(2);
  });

  it('throws when appending to an outdated view', () => {
    const old = EventIndex.from([e1]);
    old.appended([e2]);
    expect(() => old.appended([e3])).toThrow('EventIndex: append to an outdated view');
  });

  it('skips events whose id is already in the index, within a batch and across appends', () => {
    const index = EventIndex.from([e1, e2, e1]);
    expect(ids(index.after(null))).toEqual(ids([e1, e2]));
    const again = index.appended([e2, { ...e1, path: PLAN }]);
    expect(again).toBe(index);
    expect(again.size).toBe(2);
    expect(again.get(e1.id)?.path).toBe(TASK);
    const more = again.appended([e2, e3]);
    expect(ids(more.after(null))).toEqual(ids([e1, e2, e3]));
  });

  it('allows appending to the newest view even after an append of duplicates only', () => {
    const index = EventIndex.from([e1]);
    const same = index.appended([e1]);
    expect(() => same.appended([e2])).not.toThrow();
  });
});
