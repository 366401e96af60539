import { describe, expect, it } from 'vitest';
import {
  type ActorRefFrom,
  type ActorSystem,
  createActor,
  fromCallback,
  fromPromise,
  SimulatedClock,
  setup,
  waitFor,
} from 'xstate';
import { EventIndex } from '../../machines/event-index.js';
import { eventLogMachine } from '../../machines/event-log.js';
import type { LoadedJournal, ReconcileInput, ReconcileOutput } from '../../machines/event-log-context.js';
import { REPLACE_WINDOW_MS, REPLACING_REASON } from '../../machines/log-faults.js';
import { UNKNOWN_PLAN } from '../../machines/plan-diff.js';
import {
  emptyFile,
  eventPath,
  type PulseEvent,
  type PulseFileName,
  type TrackedFiles,
  untrackedFiles,
} from '../../machines/pulse-files.js';
import { nothingFound } from '../support/reconcile-output.js';

/*
 * The event log and a file missing for a moment (an editor's safe write renames it away and the
 * new one in): the replace window, with a fake disk for the reconciler and time simulated.
 */

const fileWith = (sha256: string) => ({ ...emptyFile(), sha256, size: 1, text: sha256, fingerprint: sha256 });

/** A fake disk: what each file holds now (null: missing); the scan compares it with what the log knew. */
const start = (initial: Partial<Record<PulseFileName, string>>) => {
  const clock = new SimulatedClock();
  const disk: Partial<Record<PulseFileName, string | null>> = { ...initial };
  const known = untrackedFiles();
  for (const [name, sha] of Object.entries(initial)) known[name as PulseFileName] = fileWith(sha);
  const inputs: ReconcileInput[] = [];
  const told: Array<{ type: string; events?: PulseEvent[]; blind?: unknown }> = [];
  let n = 0;
  const scan = (input: ReconcileInput): ReconcileOutput => {
    const files = { ...input.files } as TrackedFiles;
    const events: PulseEvent[] = [];
    const away: PulseFileName[] = [];
    for (const [key, now] of Object.entries(disk)) {
      const name = key as PulseFileName;
      const before = input.files[name].sha256;
      if (now === before) continue;
      if (now === null && !input.gone.includes(name)) {
        away.push(name);
        continue;
      }
      const kind = now === null ? 'deleted' : before === null ? 'created' : 'modified';
      files[name] = now === null ? emptyFile() : fileWith(now);
      events.push({
        id: `evt_${++n}`,
        timestamp: '2026-12-01T00:00:00Z',
        kind,
        path: eventPath(name),
        sha256: now ?? null,
        size: now === null ? null : 1,
      });
    }
    return { ...nothingFound(input), files, events, away };
  };
  const log = eventLogMachine.provide({
    actors: {
      loadJournal: fromPromise(
        async (): Promise<LoadedJournal> => ({
          index: EventIndex.empty(),
          ack: null,
          agents: [],
          acks: [],
          plan: UNKNOWN_PLAN,
          loadedAt: 0,
          files: known,
          warnings: [],
        }),
      ),
      reconcileFiles: fromPromise(async ({ input }: { input: ReconcileInput }) => {
        inputs.push(input);
        return scan(input);
      }),
      saveReplan: fromPromise(async () => {}),
    },
    guards: { filesUnchanged: () => false },
  });
  const replan = fromCallback(({ receive }) => {
    receive((event) => {
      told.push(event as (typeof told)[number]);
    });
  });
  const root = createActor(
    setup({ actors: { log, replan } }).createMachine({
      invoke: [
        { src: 'replan', systemId: 'replan' },
        { src: 'log', id: 'log', systemId: 'log' },
      ],
    }),
    { clock },
  ).start();
  const system: ActorSystem<{ actors: { log: ActorRefFrom<typeof eventLogMachine> } }> = root.system;
  const ref = system.get('log')!;
  const idle = () => waitFor(ref, (s) => s.matches({ ready: { scan: 'idle' } }));
  /** A caller's read-your-writes request; its ticket. */
  const ask = () => {
    ref.send({ type: 'log.reconcile' });
    return ref.getSnapshot().context.scansRequested;
  };
  const answered = (ticket: number) => ref.getSnapshot().context.scansCompleted >= ticket;
  const logged = () =>
    told
      .flatMap((event) => (event.type === 'log.appended' ? event.events! : []))
      .map((e) => [e.path, e.kind]);
  const blindSpots = () => told.filter((event) => event.type === 'log.faults').map((event) => event.blind);
  return { clock, ref, disk, inputs, idle, ask, answered, logged, blindSpots };
};

describe('the event log and a file missing for a moment', () => {
  it('logs guidance.md renamed away and a new one renamed in as one modification, and holds callers meanwhile', async () => {
    const { clock, ref, disk, inputs, idle, ask, answered, logged, blindSpots } = start({
      'guidance.md': 'v1',
    });
    await idle();
    disk['guidance.md'] = null;
    const ticket = ask();
    await idle();
    expect(answered(ticket), 'a caller does not get the old state while the file is away').toBe(false);
    expect(ref.getSnapshot().matches({ ready: { replace: { 'guidance.md': 'away' } } })).toBe(true);
    expect(blindSpots(), 'guidance being replaced is a blind spot').toEqual([
      [{ file: '.pulse/guidance.md', reason: REPLACING_REASON }],
    ]);
    disk['guidance.md'] = 'v2';
    ref.send({ type: 'file.changed', name: 'guidance.md' });
    clock.increment(20);
    await waitFor(ref, () => answered(ticket));
    expect(inputs.at(-1)!.requested, 'the waiting caller’s scan logs what it finds, however fresh').toBe(
      true,
    );
    expect(logged()).toEqual([['.pulse/guidance.md', 'modified']]);
    expect(blindSpots().at(-1), 'the hold is lifted').toEqual([]);
    expect(ref.getSnapshot().matches({ ready: { replace: { 'guidance.md': 'here' } } })).toBe(true);
    clock.increment(REPLACE_WINDOW_MS);
    await idle();
    expect(logged(), 'the window that ended with it back logs nothing more').toHaveLength(1);
  });

  it('logs nothing for a file back with the same bytes, and answers the caller then', async () => {
    const { ref, disk, idle, ask, answered, logged } = start({ 'plan.md': 'p1' });
    await idle();
    disk['plan.md'] = null;
    const ticket = ask();
    await idle();
    expect(answered(ticket)).toBe(false);
    disk['plan.md'] = 'p1';
    ask();
    await waitFor(ref, () => answered(ticket));
    expect(logged()).toEqual([]);
  });

  it('logs a file still missing when its window runs out as deleted, and answers the waiting caller with it', async () => {
    const { clock, disk, inputs, idle, ask, answered, logged, blindSpots } = start({
      'guidance.md': 'v1',
      'task.md': 't1',
    });
    await idle();
    disk['guidance.md'] = null;
    const ticket = ask();
    await idle();
    clock.increment(REPLACE_WINDOW_MS - 1);
    await idle();
    expect(answered(ticket)).toBe(false);
    expect(logged()).toEqual([]);
    clock.increment(1);
    clock.increment(20);
    await idle();
    expect(inputs.at(-1)!.gone).toEqual(['guidance.md']);
    expect(answered(ticket)).toBe(true);
    expect(logged()).toEqual([['.pulse/guidance.md', 'deleted']]);
    expect(blindSpots().at(-1)).toEqual([]);
    ask();
    await idle();
    expect(logged(), 'a deletion is logged once').toHaveLength(1);
  });

  it('gives each file its own window: a file that vanished later is not deleted at the end of the first one’s', async () => {
    const { clock, disk, idle, ask, logged } = start({ 'task.md': 't1', 'plan.md': 'p1' });
    await idle();
    disk['task.md'] = null;
    ask();
    await idle();
    clock.increment(REPLACE_WINDOW_MS / 2);
    disk['plan.md'] = null;
    ask();
    await idle();
    clock.increment(REPLACE_WINDOW_MS / 2);
    clock.increment(20);
    await idle();
    expect(logged()).toEqual([['.pulse/task.md', 'deleted']]);
    disk['plan.md'] = 'p2';
    ask();
    await idle();
    clock.increment(REPLACE_WINDOW_MS);
    clock.increment(20);
    await idle();
    expect(logged()).toEqual([
      ['.pulse/task.md', 'deleted'],
      ['.pulse/plan.md', 'modified'],
    ]);
  });

  it('starts the window again on each notice for the file, so saves back to back that no scan catches in place are no deletion', async () => {
    const { clock, ref, disk, idle, ask, answered, logged } = start({ 'guidance.md': 'v1' });
    await idle();
    disk['guidance.md'] = null;
    const ticket = ask();
    await idle();
    for (let save = 0; save < 4; save++) {
      clock.increment(REPLACE_WINDOW_MS - 50);
      // The new file was renamed in and the next save moved it away before the scan looked.
      ref.send({ type: 'file.changed', name: 'guidance.md' });
      clock.increment(20);
      await idle();
    }
    ref.send({ type: 'file.changed', name: 'task.md' });
    clock.increment(20);
    await idle();
    expect(logged(), 'no deletion while the name is in use').toEqual([]);
    expect(answered(ticket)).toBe(false);
    disk['guidance.md'] = 'v5';
    ref.send({ type: 'file.changed', name: 'guidance.md' });
    clock.increment(20);
    await idle();
    expect(logged()).toEqual([['.pulse/guidance.md', 'modified']]);
    expect(answered(ticket)).toBe(true);
  });

  it('gives a file a new window when a notice for it comes after its window ran out, before the scan that would log its deletion', async () => {
    const { clock, ref, disk, idle, ask, logged } = start({ 'plan.md': 'p1' });
    await idle();
    disk['plan.md'] = null;
    ask();
    await idle();
    clock.increment(REPLACE_WINDOW_MS);
    expect(ref.getSnapshot().context.gone).toEqual(['plan.md']);
    ref.send({ type: 'file.changed', name: 'plan.md' });
    expect(ref.getSnapshot().context.gone).toEqual([]);
    clock.increment(20);
    await idle();
    expect(logged()).toEqual([]);
    clock.increment(REPLACE_WINDOW_MS);
    clock.increment(20);
    await idle();
    expect(logged()).toEqual([['.pulse/plan.md', 'deleted']]);
  });

  it('starts a new window for a file that comes back and goes away again', async () => {
    const { clock, ref, disk, idle, ask, logged } = start({ 'constraints.md': 'c1' });
    await idle();
    disk['constraints.md'] = null;
    ask();
    await idle();
    clock.increment(REPLACE_WINDOW_MS - 100);
    disk['constraints.md'] = 'c2';
    ask();
    await idle();
    disk['constraints.md'] = null;
    ask();
    await idle();
    clock.increment(100);
    clock.increment(20);
    await idle();
    expect(logged(), 'the second absence has a window of its own').toEqual([
      ['.pulse/constraints.md', 'modified'],
    ]);
    expect(ref.getSnapshot().context.away).toEqual(['constraints.md']);
    clock.increment(REPLACE_WINDOW_MS - 100);
    clock.increment(20);
    await idle();
    expect(logged()).toEqual([
      ['.pulse/constraints.md', 'modified'],
      ['.pulse/constraints.md', 'deleted'],
    ]);
  });
});
