import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type AnyStateMachine,
  type AnyTransitionDefinition,
  initialTransition,
  type SnapshotFrom,
  transition,
} from 'xstate';
import { createTestModel, type TestPath } from 'xstate/graph';
import type { AckRecord, PulseEvent } from '../../machines/pulse-files.js';
import { replanMachine } from '../../machines/replan.js';
import type { AckRejection, ReplanEvent } from '../../machines/replan-context.js';
import {
  callTool,
  connectClient,
  type LoggedEvent,
  type RunningDaemon,
  readEvents,
  removeProject,
  startDaemon,
  tempProject,
} from '../support/daemon.js';
import { save } from '../support/files.js';
import { exportCoverage, MachineCoverage } from '../support/machine-coverage.js';
import { type Decision, type PulseFile, REASONS, TEMPLATES } from '../support/protocol.js';
import { ackAnswerIn, unheardReplies } from '../support/replan-answer.js';
import { changesGuidance as isInvalidating, LATEST, replanModel } from './replan-model.js';

/*
 * Model-based test of the replan lifecycle: paths generated from a model of its own
 * (`replan-model.ts`, written from the protocol) are run against the real `replanMachine` in
 * this process and against a real `pulse start` (real edits under .pulse/, real MCP calls), and
 * both must answer, at every step, what the model says. Event samples carry abstract ids; each
 * path keeps a little bookkeeping to turn them into the real ids of its own events.jsonl.
 */

type Snapshot = SnapshotFrom<typeof replanMachine>;
type ModelSnapshot = SnapshotFrom<typeof replanModel>;
type Restored = Extract<ReplanEvent, { type: 'replan.restored' }>;
type Appended = Extract<ReplanEvent, { type: 'log.appended' }>;
type Ack = Extract<ReplanEvent, { type: 'replan.ack' }>;
type Faults = Extract<ReplanEvent, { type: 'log.faults' }>;

const TASK = '.pulse/task.md';
const GUIDANCE = '.pulse/guidance.md';
const CONSTRAINTS = '.pulse/constraints.md';
const PLAN = '.pulse/plan.md';

const rejection = (code: AckRejection, id: string, pending: string | null): string =>
  ({
    missing_event_id: 'A pending replan event id is required.',
    unknown_event: `Event ${id} was not found.`,
    not_invalidating: `Event ${id} is not a guidance or constraints event.`,
    no_pending_replan: 'There is no pending guidance or constraints change to acknowledge.',
    stale_event: `Event ${id} is stale. Acknowledge the latest pending replan event ${pending} instead.`,
  })[code];

// ---------------------------------------------------------------------------------------------
// Event samples, with abstract ids.
//
// 'LATEST' is the id of every guidance/constraints event the model sees appended: at any step
// it stands for the newest such event in events.jsonl (the pending one, or the acknowledged one
// when nothing is pending). An ack names its event by marker:
//   LATEST   the newest guidance/constraints event
//   STALE    the oldest guidance/constraints event; offered only once something was
//            acknowledged, so that the log really holds one older than the newest
//   UNKNOWN  a well-formed id that is not in the log
//   BLANK    whitespace only
//   TASK     the newest task/plan event (a task.md edit makes one first if the log has none;
//            for the machine that edit changes nothing, which the pure tests pin down)
// ---------------------------------------------------------------------------------------------

const UNKNOWN_ID = 'evt_19990101T000000000000Z_deadbeef';
type Marker = 'LATEST' | 'STALE' | 'UNKNOWN' | 'BLANK' | 'TASK';

const modelEvent = (id: string, path: string): PulseEvent => ({
  id,
  timestamp: '',
  kind: 'modified',
  path,
  sha256: null,
  size: null,
});
/** One scan that logs a change to each of `paths`, in the order a scan finds them. */
const edit = (...paths: string[]): Appended => ({
  type: 'log.appended',
  events: paths.map((path) => modelEvent(isInvalidating({ path }) ? LATEST : 'PLAN', path)),
});
const modelAck: AckRecord = { eventId: LATEST, planSha256: 'PLAN_SHA256', at: 'AT' };
const ack = (marker: Marker): Ack => {
  const targets: Record<Marker, [string, string | null]> = {
    LATEST: [LATEST, GUIDANCE],
    STALE: ['STALE', GUIDANCE],
    UNKNOWN: ['UNKNOWN', null],
    BLANK: ['  ', null],
    TASK: ['TASK', TASK],
  };
  const [eventId, path] = targets[marker];
  return {
    type: 'replan.ack',
    requestId: 0,
    replyTo: unheardReplies,
    eventId,
    target: path === null ? null : { id: eventId, path },
    planSha256: modelAck.planSha256,
    at: modelAck.at,
  };
};
const markerOf = (event: Ack): Marker =>
  event.eventId.trim() === '' ? 'BLANK' : event.eventId === 'UNKNOWN' ? 'UNKNOWN' : (event.eventId as Marker);

/** The daemon starts on a fresh folder, or on a `.pulse/` PulseAgent left: `prepare` writes it. */
const restores: Restored[] = [
  { type: 'replan.restored', pending: { pendingEventId: null, pendingFiles: [] }, lastAck: null },
  { type: 'replan.restored', pending: { pendingEventId: LATEST, pendingFiles: [GUIDANCE] }, lastAck: null },
  { type: 'replan.restored', pending: { pendingEventId: null, pendingFiles: [] }, lastAck: modelAck },
  {
    type: 'replan.restored',
    pending: { pendingEventId: LATEST, pendingFiles: [CONSTRAINTS, GUIDANCE] },
    lastAck: modelAck,
  },
];
// Constraints first, so that a path's first edit after a restored guidance change shows order.
// The last is one scan with a constraints change and a plan change: a replan is due when any of
// an append's events is a guidance/constraints change, not only when all are.
const edits: Appended[] = [edit(CONSTRAINTS), edit(GUIDANCE), edit(PLAN), edit(CONSTRAINTS, PLAN)];

/**
 * guidance.md turned into a symlink loop, and made readable again with the text it had (so the
 * repair logs nothing). The daemon must fail closed meanwhile; what it must answer comes from the
 * path's own bookkeeping (`PathRun.blind`), not from the machine.
 */
const BLIND: Faults = { type: 'log.faults', blind: [{ file: GUIDANCE, reason: 'is a symlink loop' }] };
const SIGHTED: Faults = { type: 'log.faults', blind: [] };

/** After each refusal, the next one to probe: refusals keep the state, so one path probes them all. */
const NEXT_PROBE: Record<AckRejection, Marker | null> = {
  missing_event_id: 'UNKNOWN',
  unknown_event: 'TASK',
  not_invalidating: 'STALE',
  no_pending_replan: null,
  stale_event: null,
};

/**
 * The samples offered in a state. Every guard reads only the sample and `pendingEventId` (null
 * exactly outside `pending`), and STALE is offered only when `lastAck` is set, which both vertex
 * keys below hold: so any generated path is executable on the daemon, and replaying it on the
 * machine gives the states it names (checked at every step).
 */
const samples = (snapshot: ModelSnapshot): ReplanEvent[] => {
  const { acknowledged, answer, blind } = snapshot.context;
  if (snapshot.matches('loading')) return restores;
  const acks: Ack[] = [];
  if (!snapshot.matches('idle')) acks.push(ack('LATEST'));
  const probe = answer !== null && answer !== 'accepted' ? NEXT_PROBE[answer] : 'BLANK';
  if (probe !== null && (probe !== 'STALE' || acknowledged)) acks.push(ack(probe));
  // Saving guidance.md would also repair it: while it is a loop, only the other files are edited.
  return [
    ...restores,
    ...(blind ? edits.filter((e) => !e.events.some((change) => change.path === GUIDANCE)) : edits),
    ...acks,
    blind ? SIGHTED : BLIND,
  ];
};

// ---------------------------------------------------------------------------------------------
// Transitions of the machine definition: (source state, event type, branch).
// ---------------------------------------------------------------------------------------------

/** The real machine's states and transitions, as the in-process replay takes them. */
const coverage = new MachineCoverage(replanMachine, 'key');
const modelTransitions = new MachineCoverage(replanModel, 'key');

const taken = (
  machine: AnyStateMachine,
  from: ModelSnapshot | Snapshot | undefined,
  event: ReplanEvent | undefined,
): AnyTransitionDefinition[] =>
  from && event && event.type !== ('xstate.init' as string) ? machine.getTransitionData(from, event) : [];

/**
 * The eventless transition the replan lifecycle took after an event: its events only record, then
 * the state it was in (or entered) moves on by its `always` branches to where the step ended.
 */
const eventless = (from: Snapshot, to: Snapshot): AnyTransitionDefinition[] => {
  const taken: AnyTransitionDefinition[] = [];
  let at = replanMachine.root.states[String(from.value)];
  if (from.value === 'loading') at = replanMachine.root.states.idle;
  for (let hops = 0; at !== undefined && at.key !== to.value && hops < 3; hops++) {
    const next = (at.always ?? []).find((t) => t.target?.[0]?.key === to.value) ?? at.always?.[0];
    if (next === undefined) break;
    taken.push(next);
    at = next.target?.[0];
  }
  return taken;
};

/** For shortest paths: a vertex per state, ack phase, and the transition and outcome that led there. */
const byTransition = (state: ModelSnapshot, event?: ReplanEvent, from?: ModelSnapshot): string => {
  const outcome =
    event?.type === 'replan.ack'
      ? state.context.answer
      : event?.type === 'log.appended'
        ? event.events.map(isInvalidating)
        : null;
  return JSON.stringify([
    state.value,
    state.context.acknowledged,
    state.context.blind,
    taken(replanModel, from, event).map((definition) => modelTransitions.transitionId(definition)),
    outcome,
  ]);
};
/** For simple paths: a vertex per state and whether something was acknowledged, so the paths are journeys. */
const byPhase = (state: ModelSnapshot): string => JSON.stringify([state.value, state.context.acknowledged]);

const model = createTestModel(replanModel, {
  events: samples,
  // The model offers a bare `{ type }` for an event type without samples; an ack and a fault report need their payload.
  filterEvents: (_, event) =>
    (event.type !== 'replan.ack' || 'eventId' in event) && (event.type !== 'log.faults' || 'blind' in event),
});

type Path = TestPath<ModelSnapshot, ReplanEvent>;
const eventsOf = (path: Path) =>
  path.steps.map((step) => step.event).filter((event) => event.type !== ('xstate.init' as string));
const keyOf = (event: ReplanEvent) => JSON.stringify(event);

/** Shortest and simple paths together, without a path whose events all start a longer one. */
const withoutPrefixes = (paths: Path[]): Path[] => {
  const kept: Path[] = [];
  const sorted = [...paths].sort((a, b) => eventsOf(b).length - eventsOf(a).length);
  for (const path of sorted) {
    const events = eventsOf(path).map(keyOf);
    const covered = kept.some((longer) => {
      const others = eventsOf(longer).map(keyOf);
      return events.every((event, i) => others[i] === event);
    });
    if (!covered) kept.push(path);
  }
  return kept;
};

const shortestPaths = model.getShortestPaths({ serializeState: byTransition });
const simplePaths = model.getSimplePaths({ serializeState: byPhase });
const paths = withoutPrefixes([...shortestPaths, ...simplePaths]);

const describeEvent = (event: ReplanEvent): string => {
  switch (event.type) {
    case 'replan.restored':
      if (event.lastAck === null)
        return event.pending.pendingEventId === null
          ? 'start on a fresh folder'
          : 'start on a PulseAgent folder with a guidance change pending';
      return event.pending.pendingEventId === null
        ? 'start on a PulseAgent folder with the replan acknowledged'
        : 'start on a PulseAgent folder with constraints, then guidance changed after the ack';
    case 'log.appended':
      return `edit ${event.events.map((e) => e.path.slice('.pulse/'.length)).join(', ')}`;
    case 'log.faults':
      return event.blind.length > 0 ? 'make guidance.md a symlink loop' : 'make guidance.md readable again';
    case 'replan.ack':
      return {
        LATEST: 'ack the newest guidance/constraints event',
        STALE: 'ack an older guidance/constraints event',
        UNKNOWN: 'ack an unknown id',
        BLANK: 'ack a blank id',
        TASK: 'ack a task event',
      }[markerOf(event)];
    default:
      return event.type;
  }
};

// ---------------------------------------------------------------------------------------------
// The system under test, one daemon per path.
// ---------------------------------------------------------------------------------------------

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const distinct = (values: string[]) => [...new Set(values)];

const ACK_ANSWERS = [
  'accepted',
  'missing_event_id',
  'unknown_event',
  'not_invalidating',
  'no_pending_replan',
  'stale_event',
];
const coveredAnswers = new Set<string>();
let stepsRun = 0;

class PathRun {
  project = '';
  daemon: RunningDaemon | undefined;
  client: Client | undefined;
  /** The model along the path: the expected answers come from it. */
  model: ModelSnapshot = initialTransition(replanModel)[0];
  /** The real machine, replayed along the path in this process: it must agree with the model at every step. */
  machine: Snapshot = initialTransition(replanMachine)[0];
  /** The real ack, as the daemon must report it. */
  ack: { eventId: string; planSha256: string | null } | null = null;
  planEditedSinceAck = false;
  /** guidance.md is a symlink loop now: the daemon must fail closed. The text it had, to put back. */
  blind: string | null = null;
  #writes = 0;
  #pendingCoverage: AnyTransitionDefinition[] = [];

  file(name: string) {
    return join(this.project, '.pulse', name);
  }

  events(): Promise<LoggedEvent[]> {
    return readEvents(this.project);
  }

  /** Writes as editors do (temp file, rename), so no scan can see a half-written file. */
  async write(name: string, text: string) {
    this.#writes++;
    await save(this.file(name), text);
  }

  interrupt(lastSeen: string | null = null) {
    return callTool<Decision>(this.client!, 'pulse_should_interrupt', { last_seen_event_id: lastSeen });
  }

  /**
   * Executes one event of the path on the real machine, then on the daemon; both must agree with
   * the model, replayed along the path (a path's step holds the first snapshot its vertex had).
   */
  async run(event: ReplanEvent, step: ModelSnapshot) {
    const before = this.model;
    const [expected] = transition(replanModel, before, event);
    expect(expected.value, 'replaying the path gives the state the model generated').toEqual(step.value);
    const [machine, actions] = transition(replanMachine, this.machine, event);
    expect(machine.value, 'the machine takes the state the model expects').toEqual(expected.value);
    expect(machine.context.pendingFiles, 'the machine holds the pending files the model expects').toEqual(
      expected.context.pendingFiles,
    );
    if (event.type === 'replan.ack') {
      expect(ackAnswerIn(actions)?.code ?? 'accepted', 'the machine answers the ack as the model').toBe(
        expected.context.answer,
      );
    }
    this.#pendingCoverage = [
      ...taken(replanMachine, this.machine, event),
      ...eventless(this.machine, machine),
    ];
    this.machine = machine;
    if (event.type === 'replan.restored') await this.restore(event);
    if (event.type === 'log.appended') await this.edit(event);
    if (event.type === 'replan.ack') await this.acknowledge(event, before, expected);
    if (event.type === 'log.faults') await this.toggleBlind(event);
    this.model = expected;
  }

  /** Turns guidance.md into a symlink loop, or puts its text back; neither logs an event. */
  async toggleBlind(event: Faults) {
    const before = await this.events();
    const path = this.file('guidance.md');
    // Each swap is one rename, as an editor saves: a removal and a new file as two steps would
    // leave a moment with no guidance.md, which a scan rightly logs as deleted.
    const swap = `${path}.swap`;
    if (event.blind.length > 0) {
      this.blind = await readFile(path, 'utf8');
      await symlink('guidance.md', swap);
    } else {
      await writeFile(swap, this.blind!);
      this.blind = null;
    }
    await rename(swap, path);
    const answer = await this.interrupt();
    expect(await this.events(), 'neither a loop nor its repair is an edit').toEqual(before);
    expect(answer.unobservable.map((fault) => fault.file)).toEqual(this.blind === null ? [] : [GUIDANCE]);
  }

  /**
   * The `.pulse/` PulseAgent 0.1.0 leaves behind: a task edit; with an ack, a guidance change and
   * the plan acknowledged for it; then a change to each file the sample lists as pending.
   */
  async prepare(event: Restored) {
    const files: Record<string, string> = { ...TEMPLATES };
    const log: LoggedEvent[] = [];
    const change = (name: string, text: string) => {
      files[name] = text;
      const n = String(log.length + 1).padStart(2, '0');
      log.push({
        id: `evt_20260101T0900000000${n}Z_000000${n}`,
        timestamp: `2026-01-01T09:00:00.0000${n}+00:00`,
        kind: 'modified',
        path: `.pulse/${name}`,
        sha256: sha256(text),
        size: Buffer.byteLength(text),
      });
      return log.at(-1)!.id;
    };
    change('task.md', '# Task\n\nShip the replan model test.\n');
    if (event.lastAck) {
      const acknowledged = change('guidance.md', '# Guidance\n\nFocus on the replan lifecycle.\n');
      const plan = change('plan.md', '# Plan\n\n1. Replan for the new guidance.\n');
      this.ack = { eventId: acknowledged, planSha256: log.find((e) => e.id === plan)!.sha256 };
    }
    for (const path of event.pending.pendingFiles) {
      const name = path.slice('.pulse/'.length);
      change(
        name,
        `${TEMPLATES[name as PulseFile].split('\n')[0]}\n\nChanged while pulse was not running.\n`,
      );
    }
    await mkdir(join(this.project, '.pulse'));
    for (const [name, text] of Object.entries(files)) await writeFile(this.file(name), text);
    await writeFile(this.file('events.jsonl'), log.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const state = {
      schema_version: 2,
      project_root: this.project,
      initialized_at: '2026-01-01T08:59:00.000000+00:00',
      last_hashes: Object.fromEntries(Object.entries(files).map(([name, text]) => [name, sha256(text)])),
      last_acknowledged_event_id: this.ack?.eventId ?? null,
      last_acknowledged_plan_sha256: this.ack?.planSha256 ?? null,
      last_acknowledged_at: this.ack ? '2026-01-01T09:00:00.500000+00:00' : null,
    };
    await writeFile(this.file('state.json'), JSON.stringify(state, null, 2));
  }

  async restore(event: Restored) {
    this.project = await tempProject('pulse-model-');
    if (event.lastAck !== null || event.pending.pendingEventId !== null) await this.prepare(event);
    this.daemon = await startDaemon(this.project);
    this.client = await connectClient(this.daemon.url);
  }

  async edit(event: Appended) {
    const before = await this.events();
    for (const { path } of event.events) {
      const name = path.slice('.pulse/'.length);
      await this.write(
        name,
        `${TEMPLATES[name as PulseFile].split('\n')[0]}\n\nEdit ${this.#writes + 1} of this path.\n`,
      );
    }
    if (event.events.some((e) => e.path === PLAN)) this.planEditedSinceAck = true;
    const answer = await this.interrupt(before.at(-1)?.id ?? null);
    const added = (await this.events()).slice(before.length);
    // Saves within one step may be logged in either order: a scan's parallel reads can catch the later one first.
    const edited = event.events.map((e) => e.path).sort();
    expect(added.map((e) => e.path).sort(), 'one event per edited file').toEqual(edited);
    for (const logged of added) {
      expect(logged.kind).toBe('modified');
      expect(logged.sha256).toBe(sha256(await readFile(join(this.project, logged.path))));
    }
    expect(answer.has_new_events).toBe(true);
    expect(answer.changed_files, 'in the order they were logged').toEqual(added.map((e) => e.path));
    expect([...answer.changed_files].sort()).toEqual(edited);
    expect(answer.latest_event_id).toBe(added.at(-1)!.id);
  }

  /** The real id an ack marker stands for, in this path's log. */
  async resolve(marker: Marker, before: ModelSnapshot): Promise<string> {
    let events = await this.events();
    const invalidating = events.filter(isInvalidating);
    switch (marker) {
      case 'BLANK':
        return '  ';
      case 'UNKNOWN':
        return UNKNOWN_ID;
      case 'LATEST':
        expect(invalidating.length, 'LATEST needs a guidance/constraints event in the log').toBeGreaterThan(
          0,
        );
        return invalidating.at(-1)!.id;
      case 'STALE':
        if (before.matches('pending')) {
          expect(invalidating.length, 'STALE needs an event older than the pending one').toBeGreaterThan(1);
        }
        return invalidating[0]!.id;
      case 'TASK':
        if (!events.some((e) => !isInvalidating(e))) {
          await this.write('task.md', '# Task\n\nA task edit, so the log has an event to misuse.\n');
          await this.interrupt();
          events = await this.events();
        }
        return events.filter((e) => !isInvalidating(e)).at(-1)!.id;
    }
  }

  async acknowledge(event: Ack, before: ModelSnapshot, after: ModelSnapshot) {
    const expected = after.context.answer!;
    const id = await this.resolve(markerOf(event), before);
    const plan = sha256(await readFile(this.file('plan.md')));
    const pending = (await this.events()).filter(isInvalidating).at(-1)?.id ?? null;
    const reply = await callTool(this.client!, 'pulse_ack_replan', { event_id: id });
    if (expected === 'accepted') {
      expect(reply).toEqual({
        accepted: true,
        acknowledged_event_id: id,
        plan_sha256: plan,
        reason: REASONS.accepted,
        durable: true,
        plan_changed: expect.any(Boolean),
        plan_change: expect.any(String),
        agent_id: expect.stringMatching(/^session:/),
      });
      // Said plainly when the plan did not change; never both.
      const { plan_changed, plan_change } = reply as { plan_changed: boolean; plan_change: string };
      expect(plan_change === 'acknowledged without changing the plan').toBe(!plan_changed);
      this.ack = { eventId: id, planSha256: plan };
      this.planEditedSinceAck = false;
    } else {
      expect(reply).toEqual({
        accepted: false,
        acknowledged_event_id: this.ack?.eventId ?? null,
        plan_sha256: this.ack?.planSha256 ?? null,
        reason: rejection(expected, id, pending),
        code: expected,
        agent_id: expect.stringMatching(/^session:/),
      });
    }
    coveredAnswers.add(expected);
  }

  /** What the daemon answers in the state the model reached; then this step counts as covered. */
  async check(state: 'idle' | 'pending' | 'acknowledged') {
    const expected = this.model.context;
    const answer = await this.interrupt();
    const events = await this.events();
    const ackAt = this.ack ? events.findIndex((e) => e.id === this.ack!.eventId) : -1;
    const unacknowledged = events.slice(ackAt + 1).filter(isInvalidating);
    const sighted =
      state === 'pending' ? REASONS.pending : events.length > 0 ? REASONS.newEvents : REASONS.quiet;
    expect(answer).toMatchObject({
      // Fail closed: a guidance.md pulse cannot read puts the plan on hold, pending event or not.
      needs_replan: state === 'pending' || this.blind !== null,
      latest_event_id: events.at(-1)?.id ?? null,
      pending_replan_files: expected.pendingFiles,
      last_acknowledged_event_id: this.ack?.eventId ?? null,
      last_acknowledged_plan_sha256: this.ack?.planSha256 ?? null,
    });
    if (this.blind === null) expect(answer.reason).toBe(sighted);
    else {
      expect(answer.reason).toMatch(
        /^pulse cannot see or record changes .*\.pulse\/guidance\.md is a symlink, and pulse never reads through symlinks/,
      );
      expect(answer.reason.endsWith(REASONS.pending)).toBe(state === 'pending');
      expect(answer.unobservable).toEqual([
        { file: GUIDANCE, reason: expect.stringMatching(/^is a symlink, and pulse never reads/) },
      ]);
    }
    // The log itself agrees: the files of the guidance/constraints events after the ack, first seen first.
    expect(distinct(unacknowledged.map((e) => e.path))).toEqual(expected.pendingFiles);
    if (state === 'idle') {
      expect(answer.pending_replan_event_id).toBeNull();
      expect(events.filter(isInvalidating)).toEqual([]);
      expect(this.ack).toBeNull();
    }
    if (state === 'pending') {
      expect(answer.pending_replan_event_id).toBe(unacknowledged.at(-1)!.id);
      expect(answer.pending_replan_event_id).toBe(events.filter(isInvalidating).at(-1)!.id);
    }
    if (state === 'acknowledged') {
      expect(answer.pending_replan_event_id).toBeNull();
      expect(this.ack?.eventId).toBe(events.filter(isInvalidating).at(-1)!.id);
      const saved = JSON.parse(await readFile(this.file('state.json'), 'utf8'));
      expect(saved.last_acknowledged_event_id).toBe(this.ack!.eventId);
      expect(saved.last_acknowledged_plan_sha256).toBe(this.ack!.planSha256);
      if (!this.planEditedSinceAck) {
        expect(this.ack!.planSha256, 'the acknowledged plan is plan.md as it is').toBe(
          sha256(await readFile(this.file('plan.md'))),
        );
      }
    }
    coverage.take(this.#pendingCoverage);
    this.#pendingCoverage = [];
    stepsRun++;
  }

  async stop() {
    await this.client?.close().catch(() => {});
    await this.daemon?.kill9();
    if (this.project) await removeProject(this.project);
  }
}

const running = new Map<string, PathRun>();

afterEach(async ({ task }) => {
  await running.get(task.id)?.stop();
  running.delete(task.id);
});

afterAll(() => exportCoverage(coverage.record('replan', 'replan.model', 'daemon')));

afterAll(() => {
  const answers = ACK_ANSWERS.filter((answer) => coveredAnswers.has(answer));
  console.log(
    `replan model coverage: ${coverage.summary()}\n` +
      `  ack answers ${answers.length}/${ACK_ANSWERS.length}; ${paths.length} paths run (${shortestPaths.length} shortest + ${simplePaths.length} simple, prefixes dropped), ${stepsRun} steps`,
  );
  expect(coverage.missingStates(), 'states never reached').toEqual([]);
  // The agents' own steps are the several-agents model's (replan-agents.model.test.ts).
  const agentStep = /--(agent\.|agents\.)/;
  expect(
    coverage.missingTransitions().filter((t) => !agentStep.test(t)),
    'transitions never taken',
  ).toEqual([]);
  expect(
    ACK_ANSWERS.filter((answer) => !coveredAnswers.has(answer)),
    'ack answers never checked',
  ).toEqual([]);
});

describe.concurrent('replan lifecycle, model paths against a running daemon', () => {
  it.for(paths.map((path) => [eventsOf(path).map(describeEvent).join(' → '), path] as const))(
    'answers as the model at every step: %s',
    async ([, path], { task }) => {
      const run = new PathRun();
      running.set(task.id, run);
      await path.test({
        events: {
          'replan.restored': (step) => run.run(step.event as ReplanEvent, step.state),
          'log.appended': (step) => run.run(step.event as ReplanEvent, step.state),
          'replan.ack': (step) => run.run(step.event as ReplanEvent, step.state),
          'log.faults': (step) => run.run(step.event as ReplanEvent, step.state),
        },
        states: {
          idle: () => run.check('idle'),
          pending: () => run.check('pending'),
          acknowledged: () => run.check('acknowledged'),
        },
      });
    },
  );
});
