import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ActorRefFrom,
  type ActorSystem,
  createActor,
  type EventObject,
  fromCallback,
  initialTransition,
  type SnapshotFrom,
  setup,
  transition,
} from 'xstate';
import type { PendingReplan } from '../../machines/event-index.js';
import { type PlanSnapshot, UNKNOWN_PLAN } from '../../machines/plan-diff.js';
import type { AckRecord, PulseEvent } from '../../machines/pulse-files.js';
import { replanMachine } from '../../machines/replan.js';
import type { ReplanEvent } from '../../machines/replan-context.js';
import { ACK_ACCEPTED_REASON, needsReplan } from '../../machines/replan-decisions.js';
import { ackAnswerIn, sentBy, unheardReplies } from '../support/replan-answer.js';

type Snapshot = SnapshotFrom<typeof replanMachine>;

const TASK = '.pulse/task.md';
const GUIDANCE = '.pulse/guidance.md';
const CONSTRAINTS = '.pulse/constraints.md';
const PLAN = '.pulse/plan.md';
const PLAN_SHA = 'b'.repeat(64);
const AT = '2026-11-29T10:16:00.000000Z';

let sequence = 0;
/** A log event with a fresh id; ids sort in creation order, as in events.jsonl. */
const logged = (path: string): PulseEvent => {
  sequence++;
  return {
    id: `evt_20261129T101500${String(sequence).padStart(6, '0')}Z_0000abcd`,
    timestamp: '2026-11-29T10:15:00.000000Z',
    kind: 'modified',
    path,
    sha256: 'a'.repeat(64),
    size: 10,
  };
};

const none: PendingReplan = { pendingEventId: null, pendingFiles: [] };
const previousAck: AckRecord = {
  eventId: 'evt_20261129T090000000000Z_00000001',
  planSha256: 'c'.repeat(64),
  at: AT,
};

const loading = (): Snapshot => initialTransition(replanMachine)[0];
const restore = (pending: PendingReplan, lastAck: AckRecord | null = null) =>
  transition(replanMachine, loading(), { type: 'replan.restored', pending, lastAck });
const restored = (pending: PendingReplan, lastAck: AckRecord | null = null): Snapshot =>
  restore(pending, lastAck)[0];
const append = (snapshot: Snapshot, ...events: PulseEvent[]) =>
  transition(replanMachine, snapshot, { type: 'log.appended', events });
const appended = (snapshot: Snapshot, ...events: PulseEvent[]): Snapshot => append(snapshot, ...events)[0];

const replyTo = unheardReplies;

/** An ack as `src/system/ask-actors.ts` builds it: `target` is the logged event the id names, or null. */
const ack = (eventId: string, target: PulseEvent | null = null, requestId = 7): ReplanEvent => ({
  type: 'replan.ack',
  requestId,
  replyTo,
  eventId,
  target: target && { id: target.id, path: target.path },
  planSha256: PLAN_SHA,
  at: AT,
});

/** One pure step of the lifecycle on an ack: the next snapshot, and the answer the ack gets. */
const acking = (snapshot: Snapshot, event: ReplanEvent) => {
  const [next, actions] = transition(replanMachine, snapshot, event);
  return { next, reply: ackAnswerIn(actions), actions };
};

const pendingOf = ({ context }: Snapshot) => ({
  pendingEventId: context.pendingEventId,
  pendingFiles: context.pendingFiles,
});

/**
 * The replan machine running in a parent that registers stubs under `log` and `gate` by system
 * id, as xstate's own system tests do; each stub records what it is sent, so where a send goes
 * and what it says can be checked. `sent` is emptied after each step.
 */
const beside = (...before: ReplanEvent[]) => {
  const sent: Record<'log' | 'gate', EventObject[]> = { log: [], gate: [] };
  const stub = (id: 'log' | 'gate') =>
    fromCallback(({ receive }) => receive((event) => sent[id].push(event)));
  const root = createActor(
    setup({ actors: { log: stub('log'), gate: stub('gate'), replan: replanMachine } }).createMachine({
      invoke: [
        { src: 'log', systemId: 'log' },
        { src: 'gate', systemId: 'gate' },
        { src: 'replan', systemId: 'replan' },
      ],
    }),
  ).start();
  running.push(root);
  const system: ActorSystem<{ actors: { replan: ActorRefFrom<typeof replanMachine> } }> = root.system;
  const replan = system.get('replan')!;
  const step = (event: ReplanEvent) => {
    sent.log = [];
    sent.gate = [];
    replan.send(event);
    return { next: replan.getSnapshot(), log: sent.log, gate: sent.gate };
  };
  for (const event of before) step(event);
  return { replan, step };
};

const running: Array<{ stop(): void }> = [];
afterEach(() => {
  for (const actor of running.splice(0)) actor.stop();
});

describe('replanMachine: restoring from the event log', () => {
  it('waits in loading, only starting its agent clock, until the event log restores it', () => {
    const [snapshot, actions] = initialTransition(replanMachine);
    expect(snapshot.value).toBe('loading');
    expect(actions.map((action) => action.type)).toEqual(['xstate.spawnChild']);
    expect(snapshot.context).toEqual({
      pendingEventId: null,
      pendingFiles: [],
      unclaimed: { pendingEventId: null, pendingFiles: [] },
      agents: {},
      lastAck: null,
      blind: [],
      plan: UNKNOWN_PLAN,
      unclaimedBase: null,
      acks: [],
    });
  });

  it('restores to idle when nothing is pending and nothing was ever acknowledged', () => {
    const snapshot = restored(none);
    expect(snapshot.value).toBe('idle');
    expect(snapshot.context).toMatchObject({ pendingEventId: null, pendingFiles: [], lastAck: null });
  });

  it('restores to pending with the pending event and files the event log found', () => {
    const pending = { pendingEventId: 'evt_b', pendingFiles: [CONSTRAINTS, GUIDANCE] };
    const snapshot = restored(pending);
    expect(snapshot.value).toBe('pending');
    expect(pendingOf(snapshot)).toEqual(pending);
    expect(snapshot.context.lastAck).toBeNull();
  });

  it('restores to acknowledged with the last ack when nothing is pending after it', () => {
    const snapshot = restored(none, previousAck);
    expect(snapshot.value).toBe('acknowledged');
    expect(snapshot.context.lastAck).toEqual(previousAck);
    expect(pendingOf(snapshot)).toEqual(none);
  });

  it('restores to pending, keeping the last ack, when a change was logged after the ack', () => {
    const pending = { pendingEventId: 'evt_c', pendingFiles: [GUIDANCE] };
    const snapshot = restored(pending, previousAck);
    expect(snapshot.value).toBe('pending');
    expect(pendingOf(snapshot)).toEqual(pending);
    expect(snapshot.context.lastAck).toEqual(previousAck);
  });
});

describe('replanMachine: log.appended', () => {
  it.each([GUIDANCE, CONSTRAINTS])(
    'becomes pending on an event for %s, naming that event and file',
    (path) => {
      const event = logged(path);
      const snapshot = appended(restored(none), event);
      expect(snapshot.value).toBe('pending');
      expect(pendingOf(snapshot)).toEqual({ pendingEventId: event.id, pendingFiles: [path] });
    },
  );

  it('names the latest guidance/constraints event pending and lists each file once, in first-seen order', () => {
    const [g1, p1, c1, g2] = [logged(GUIDANCE), logged(PLAN), logged(CONSTRAINTS), logged(GUIDANCE)];
    const first = appended(restored(none), g1, p1, c1, g2);
    expect(pendingOf(first)).toEqual({ pendingEventId: g2.id, pendingFiles: [GUIDANCE, CONSTRAINTS] });

    const c2 = logged(CONSTRAINTS);
    const t1 = logged(TASK);
    const second = appended(first, c2, t1);
    expect(second.value).toBe('pending');
    expect(pendingOf(second)).toEqual({ pendingEventId: c2.id, pendingFiles: [GUIDANCE, CONSTRAINTS] });
  });

  it('orders pending files by first appearance, constraints first when constraints changed first', () => {
    const [c1, g1] = [logged(CONSTRAINTS), logged(GUIDANCE)];
    const snapshot = appended(restored({ pendingEventId: null, pendingFiles: [] }), c1, g1);
    expect(pendingOf(snapshot)).toEqual({ pendingEventId: g1.id, pendingFiles: [CONSTRAINTS, GUIDANCE] });
  });

  it('adds to the files restored from the log rather than starting over', () => {
    const snapshot = appended(
      restored({ pendingEventId: 'evt_restored', pendingFiles: [CONSTRAINTS] }),
      logged(GUIDANCE),
    );
    expect(snapshot.context.pendingFiles).toEqual([CONSTRAINTS, GUIDANCE]);
  });

  it('stays idle, unchanged, on plan and task events', () => {
    const before = restored(none);
    const [after, actions] = append(before, logged(PLAN), logged(TASK));
    expect(after.value).toBe('idle');
    expect(after.context).toEqual(before.context);
    expect(actions).toEqual([]);
  });

  it('stays acknowledged on a plan event: editing the plan does not invalidate it', () => {
    const before = restored(none, previousAck);
    const after = appended(before, logged(PLAN));
    expect(after.value).toBe('acknowledged');
    expect(after.context).toEqual(before.context);
  });

  it('keeps a pending replan pending, with the same event and files, on plan and task events', () => {
    const g1 = logged(GUIDANCE);
    const before = appended(restored(none), g1);
    const after = appended(before, logged(PLAN), logged(TASK));
    expect(after.value).toBe('pending');
    expect(pendingOf(after)).toEqual({ pendingEventId: g1.id, pendingFiles: [GUIDANCE] });
  });

  it('becomes pending again after an ack when constraints change, keeping the last ack', () => {
    const c1 = logged(CONSTRAINTS);
    const snapshot = appended(restored(none, previousAck), c1);
    expect(snapshot.value).toBe('pending');
    expect(pendingOf(snapshot)).toEqual({ pendingEventId: c1.id, pendingFiles: [CONSTRAINTS] });
    expect(snapshot.context.lastAck).toEqual(previousAck);
  });
});

describe('replanMachine: replan.ack checks, in PulseAgent order', () => {
  it.each(['', '   ', '\t\n'])('refuses a blank id (%j) first, before looking it up', (eventId) => {
    // Idle with no target: the unknown and no-pending checks would fail too; blank comes first.
    const { reply } = acking(restored(none), ack(eventId, null));
    expect(reply).toEqual({
      requestId: 7,
      accepted: false,
      acknowledged_event_id: null,
      plan_sha256: null,
      reason: 'A pending replan event id is required.',
      code: 'missing_event_id',
    });
  });

  it('refuses an unknown id before saying nothing is pending', () => {
    const { reply } = acking(restored(none, previousAck), ack('evt_nope', null));
    expect(reply).toMatchObject({
      accepted: false,
      code: 'unknown_event',
      reason: 'Event evt_nope was not found.',
    });
  });

  it.each([PLAN, TASK])('refuses an event for %s as not invalidating, before the pending checks', (path) => {
    const event = logged(path);
    for (const snapshot of [restored(none, previousAck), appended(restored(none), logged(GUIDANCE))]) {
      const { reply } = acking(snapshot, ack(event.id, event));
      expect(reply).toMatchObject({
        accepted: false,
        code: 'not_invalidating',
        reason: `Event ${event.id} is not a guidance or constraints event.`,
      });
    }
  });

  it('refuses a guidance event when nothing is pending, the acknowledged one included', () => {
    const acked = logged(GUIDANCE);
    const lastAck = { ...previousAck, eventId: acked.id };
    const { next: snapshot, reply } = acking(restored(none, lastAck), ack(acked.id, acked));
    expect(snapshot.value).toBe('acknowledged');
    expect(reply).toEqual({
      requestId: 7,
      accepted: false,
      acknowledged_event_id: acked.id,
      plan_sha256: previousAck.planSha256,
      reason: 'There is no pending guidance or constraints change to acknowledge.',
      code: 'no_pending_replan',
    });
  });

  it('rejects a stale ack and names the pending event, keeping the last ack in the answer', () => {
    const [g1, c1] = [logged(GUIDANCE), logged(CONSTRAINTS)];
    const pending = appended(restored(none, previousAck), g1, c1);
    const { reply } = acking(pending, ack(g1.id, g1));
    expect(reply).toEqual({
      requestId: 7,
      accepted: false,
      acknowledged_event_id: previousAck.eventId,
      plan_sha256: previousAck.planSha256,
      reason: `Event ${g1.id} is stale. Acknowledge the latest pending replan event ${c1.id} instead.`,
      code: 'stale_event',
    });
  });

  it('changes neither the state nor the pending replan on any rejection, and sends nothing but the reply', () => {
    const [g1, g2, p1] = [logged(GUIDANCE), logged(GUIDANCE), logged(PLAN)];
    const pending = appended(restored(none, previousAck), g1, p1, g2);
    const acknowledged = restored(none, previousAck);
    const cases: Array<[Snapshot, ReplanEvent, string]> = [
      [pending, ack(' ', null), 'missing_event_id'],
      [pending, ack('evt_nope', null), 'unknown_event'],
      [pending, ack(p1.id, p1), 'not_invalidating'],
      [pending, ack(g1.id, g1), 'stale_event'],
      [acknowledged, ack(g2.id, g2), 'no_pending_replan'],
      [restored(none), ack('evt_nope', null), 'unknown_event'],
    ];
    for (const [before, event, code] of cases) {
      const { next: after, reply, actions } = acking(before, event);
      expect(reply?.code).toBe(code);
      expect(after.value).toBe(before.value);
      expect(pendingOf(after)).toEqual(pendingOf(before));
      expect(after.context.lastAck).toEqual(before.context.lastAck);
      expect(sentBy(actions).map((sent) => sent.type)).toEqual(['reply']);
      expect(actions).toHaveLength(1);
    }
  });

  it('answers each ack under its own request id, so concurrent callers each find their reply', () => {
    const before = restored(none);
    const first = acking(before, ack('evt_a', null, 41));
    const second = acking(first.next, ack('', null, 42));
    expect(first.reply).toMatchObject({ requestId: 41, code: 'unknown_event' });
    expect(second.reply).toMatchObject({ requestId: 42, code: 'missing_event_id' });
  });
});

describe('replanMachine: an accepted ack', () => {
  it('acknowledges the latest pending event: pending cleared, lastAck recorded, accepted reply', () => {
    const [c1, g1] = [logged(CONSTRAINTS), logged(GUIDANCE)];
    const pending = appended(restored(none), c1, g1);
    const { next: snapshot, reply } = acking(pending, ack(g1.id, g1));
    expect(snapshot.value).toBe('acknowledged');
    expect(pendingOf(snapshot)).toEqual(none);
    expect(snapshot.context.lastAck).toEqual({ eventId: g1.id, planSha256: PLAN_SHA, at: AT });
    expect(reply).toEqual({
      requestId: 7,
      accepted: true,
      acknowledged_event_id: g1.id,
      plan_sha256: PLAN_SHA,
      reason: ACK_ACCEPTED_REASON,
      // No reading of the plan at the change came with these events: pulse says it cannot tell.
      plan_changed: true,
      plan_change: expect.stringMatching(/^pulse had no reading of the plan at the change/),
    });
    expect(ACK_ACCEPTED_REASON).toBe('Replan acknowledged for the latest guidance or constraints event.');
  });

  it('returns an ack.record sendTo among its actions, for the event log to make the ack durable', () => {
    const g1 = logged(GUIDANCE);
    const pending = appended(restored(none), g1);
    const [, actions] = transition(replanMachine, pending, ack(g1.id, g1, 9));
    const sends = actions.filter((action) => action.type === 'xstate.sendTo');
    expect(sends).toHaveLength(1);
    expect(sends[0]!.params).toMatchObject({
      event: {
        type: 'replan.record',
        ack: { eventId: g1.id, planSha256: PLAN_SHA, at: AT },
        answers: { asking: { requestId: 9, replyTo }, reply: { accepted: true } },
      },
    });
  });

  it('addresses the ack.record to the actor registered as log in the system', () => {
    const g1 = logged(GUIDANCE);
    const { step } = beside(
      { type: 'replan.restored', pending: none, lastAck: null },
      {
        type: 'log.appended',
        events: [g1],
      },
    );
    const { next, log } = step(ack(g1.id, g1));
    expect(next.value).toBe('acknowledged');
    expect(log).toMatchObject([{ type: 'replan.record', ack: { eventId: g1.id } }]);
  });

  it('accepts the pending event restored from the log, replacing the older ack', () => {
    const pending = restored({ pendingEventId: 'evt_restored', pendingFiles: [GUIDANCE] }, previousAck);
    const target = { ...logged(GUIDANCE), id: 'evt_restored' };
    const [snapshot] = transition(replanMachine, pending, ack('evt_restored', target));
    expect(snapshot.value).toBe('acknowledged');
    expect(snapshot.context.lastAck).toEqual({ eventId: 'evt_restored', planSha256: PLAN_SHA, at: AT });
  });

  it('becomes pending again on the next guidance change and accepts only that newer event', () => {
    const [g1, g2] = [logged(GUIDANCE), logged(GUIDANCE)];
    const acknowledged = transition(replanMachine, appended(restored(none), g1), ack(g1.id, g1))[0];
    const pending = appended(acknowledged, g2);
    expect(pending.value).toBe('pending');
    expect(pending.context.lastAck?.eventId).toBe(g1.id);
    expect(acking(pending, ack(g1.id, g1)).reply?.code).toBe('stale_event');
    expect(transition(replanMachine, pending, ack(g2.id, g2))[0].value).toBe('acknowledged');
  });
});

describe('replanMachine: what the event log cannot see', () => {
  const LOOP = { file: GUIDANCE, reason: 'is a symlink loop (ELOOP): replace it with a regular file' };
  const faults = (snapshot: Snapshot, ...blind: (typeof LOOP)[]) =>
    transition(replanMachine, snapshot, { type: 'log.faults', blind });

  it('puts the plan on hold with no pending event while guidance cannot be seen, and lifts it when it can', () => {
    const blinded = faults(restored(none), LOOP)[0];
    expect(blinded.value).toBe('idle');
    expect(blinded.context.pendingEventId).toBeNull();
    expect(needsReplan(blinded.context)).toBe(true);
    const sighted = faults(blinded)[0];
    expect(needsReplan(sighted.context)).toBe(false);
    expect(needsReplan(restored(none).context)).toBe(false);
  });

  it('tells the gate a replan is to be answered while blind, and that none is once sighted', () => {
    const { step } = beside({ type: 'replan.restored', pending: none, lastAck: null });
    expect(step({ type: 'log.faults', blind: [LOOP] }).gate).toEqual([
      { type: 'replan.status', pending: true },
    ]);
    expect(step({ type: 'log.faults', blind: [] }).gate).toEqual([{ type: 'replan.status', pending: false }]);
  });

  it('judges acks as ever while blind: the pending event is accepted, the hold stays until guidance is seen', () => {
    const g1 = logged(GUIDANCE);
    const blinded = faults(appended(restored(none), g1), LOOP)[0];
    const { next: acked, reply } = acking(blinded, ack(g1.id, g1));
    expect(acked.value).toBe('acknowledged');
    expect(reply?.accepted).toBe(true);
    expect(needsReplan(acked.context)).toBe(true);
    expect(needsReplan(faults(acked)[0].context)).toBe(false);
  });
});

describe('replanMachine: each ack carries its replan', () => {
  const plan = (text: string | null): PlanSnapshot => ({
    sha256: text === null ? null : createHash('sha256').update(text).digest('hex'),
    text,
    size: text === null ? null : Buffer.byteLength(text),
  });
  const BEFORE = plan('# Plan\n\n1. Rewrite the parser\n2. Ship it\n');
  const AFTER = plan('# Plan\n\n1. Patch the parser\n2. Ship it\n3. Tell the user\n');
  const hear = (snapshot: Snapshot, party: string) =>
    transition(replanMachine, snapshot, { type: 'agent.heard', party, at: 1000, closes: true })[0];
  const change = (snapshot: Snapshot, at: PlanSnapshot, ...events: PulseEvent[]) =>
    transition(replanMachine, snapshot, { type: 'log.appended', events, plan: at })[0];
  const ackingBy = (
    snapshot: Snapshot,
    party: string,
    eventId: string,
    target: PulseEvent,
    at: PlanSnapshot,
  ) =>
    acking(snapshot, {
      type: 'replan.ack',
      requestId: 3,
      replyTo,
      eventId,
      target: { id: target.id, path: target.path },
      planSha256: at.sha256,
      plan: at,
      at: AT,
      agent: party,
    });
  const ackBy = (snapshot: Snapshot, party: string, eventId: string, target: PulseEvent, at: PlanSnapshot) =>
    ackingBy(snapshot, party, eventId, target, at).next;
  const twoAgents = () => hear(hear(restored(none), 'session:a'), 'session:b');

  it('tells the gate the hold is over at the first ack, while another agent still owes its own', () => {
    const g1 = logged(GUIDANCE);
    const { step } = beside(
      { type: 'replan.restored', pending: none, lastAck: null },
      { type: 'agent.heard', party: 'session:a', at: 1000, closes: true },
      { type: 'agent.heard', party: 'session:b', at: 1000, closes: true },
      { type: 'log.appended', events: [g1], plan: BEFORE },
    );
    const { next, gate } = step({
      type: 'replan.ack',
      requestId: 3,
      replyTo,
      eventId: g1.id,
      target: { id: g1.id, path: g1.path },
      planSha256: AFTER.sha256,
      plan: AFTER,
      at: AT,
      agent: 'session:a',
    });
    // session:b still owes its ack, so the lifecycle stays pending: no state entry tells the gate.
    expect(next.value).toBe('pending');
    expect(gate).toEqual([{ type: 'replan.status', pending: false }]);
  });

  it("records each agent's ack with the diff of plan.md from the change to its ack, and says so in the reply", () => {
    const g1 = logged(GUIDANCE);
    const pending = change(twoAgents(), BEFORE, g1);
    const { next: first, reply } = ackingBy(pending, 'session:a', g1.id, g1, AFTER);
    expect(reply).toMatchObject({
      accepted: true,
      plan_changed: true,
      plan_change: 'the plan changed: 2 lines added, 1 removed',
    });
    const [record] = first.context.acks;
    expect(record).toMatchObject({
      agent: 'session:a',
      parties: ['session:a'],
      event_id: g1.id,
      files: [GUIDANCE],
      plan_before_sha256: BEFORE.sha256,
      plan_after_sha256: AFTER.sha256,
      plan_changed: true,
      added: 2,
      removed: 1,
    });
    expect(record!.diff).toBe(
      [
        '--- plan.md at the change',
        '+++ plan.md at the ack',
        '@@ -1,4 +1,5 @@',
        ' # Plan',
        ' ',
        '-1. Rewrite the parser',
        '+1. Patch the parser',
        ' 2. Ship it',
        '+3. Tell the user',
      ].join('\n'),
    );
    // The other agent acknowledges with the plan as the first one left it: for it the plan did change too.
    const second = ackBy(first, 'session:b', g1.id, g1, AFTER);
    expect(second.context.acks).toHaveLength(2);
    expect(second.context.acks[1]).toMatchObject({
      agent: 'session:b',
      plan_changed: true,
      summary: 'the plan changed: 2 lines added, 1 removed; no edit since the previous ack of this change',
    });
    expect(second.value).toBe('acknowledged');
  });

  it('accepts an ack with the plan untouched, and says plainly that the plan did not change', () => {
    const g1 = logged(GUIDANCE);
    const { next: done, reply } = ackingBy(change(twoAgents(), BEFORE, g1), 'session:a', g1.id, g1, BEFORE);
    expect(reply).toMatchObject({
      accepted: true,
      plan_changed: false,
      plan_change: 'acknowledged without changing the plan',
    });
    expect(done.context.acks[0]).toMatchObject({ plan_changed: false, diff: null, added: 0, removed: 0 });
  });

  it('diffs against the plan at the first change an agent owed, however many came before its ack', () => {
    const g1 = logged(GUIDANCE);
    const c2 = logged(CONSTRAINTS);
    const MIDDLE = plan('# Plan\n\n1. Patch the parser\n2. Ship it\n');
    const owed = change(change(twoAgents(), BEFORE, g1), MIDDLE, c2);
    const done = ackBy(owed, 'session:a', c2.id, c2, AFTER);
    expect(done.context.acks[0]).toMatchObject({
      plan_before_sha256: BEFORE.sha256,
      files: [GUIDANCE, CONSTRAINTS],
      added: 2,
      removed: 1,
    });
  });

  it('holds a newcomer against the plan at the change it comes to owe, not the plan when it came', () => {
    const g1 = logged(GUIDANCE);
    const pending = change(restored(none), BEFORE, g1);
    const late = hear(pending, 'session:late');
    expect(late.context.agents['session:late']).toMatchObject({ planBase: BEFORE, owingSince: 1000 });
    expect(ackBy(late, 'session:late', g1.id, g1, AFTER).context.acks[0]).toMatchObject({
      plan_before_sha256: BEFORE.sha256,
      plan_changed: true,
    });
  });

  it('keeps the last 20 acks, oldest first, and sends them with the agents for state.json', () => {
    let snapshot = twoAgents();
    for (let i = 0; i < 25; i++) {
      const event = logged(GUIDANCE);
      snapshot = ackBy(change(snapshot, BEFORE, event), 'session:a', event.id, event, AFTER);
    }
    expect(snapshot.context.acks).toHaveLength(20);
    const last = logged(GUIDANCE);
    const [, actions] = transition(replanMachine, change(snapshot, BEFORE, last), {
      type: 'replan.ack',
      requestId: 4,
      replyTo,
      eventId: last.id,
      target: last,
      planSha256: null,
      at: AT,
      agent: 'session:a',
    });
    const record = actions.find((action) => action.type === 'xstate.sendTo')!.params;
    expect(record).toMatchObject({ event: { type: 'replan.record', acks: expect.any(Array) } });
    expect((record as unknown as { event: { acks: unknown[] } }).event.acks).toHaveLength(20);
  });

  it('restores the acks state.json kept, and holds an agent that owed across the restart against the plan at load', () => {
    const g1 = logged(GUIDANCE);
    const [snapshot] = transition(replanMachine, loading(), {
      type: 'replan.restored',
      pending: { pendingEventId: g1.id, pendingFiles: [GUIDANCE] },
      lastAck: null,
      agents: [
        {
          parties: ['hook:claude:s1'],
          owes_event_id: g1.id,
          owes_files: [GUIDANCE],
          acked_at: null,
          tied_by: null,
        },
      ],
      at: 5000,
      plan: BEFORE,
      acks: [
        {
          agent: 'session:old',
          parties: ['session:old'],
          event_id: 'evt_20261129T090000000000Z_00000001',
          files: [GUIDANCE],
          at: AT,
          owed_since: null,
          plan_before_sha256: null,
          plan_after_sha256: null,
          plan_changed: false,
          added: 0,
          removed: 0,
          summary: 'acknowledged without changing the plan',
          diff: null,
        },
      ],
    });
    expect(snapshot.context.acks).toHaveLength(1);
    expect(snapshot.context.agents['hook:claude:s1']).toMatchObject({ planBase: BEFORE, owingSince: 5000 });
  });
});
