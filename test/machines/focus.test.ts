import { describe, expect, it } from 'vitest';
import {
  type ActorRefFrom,
  type ActorSystem,
  assign,
  createActor,
  fromPromise,
  setup,
  waitFor,
} from 'xstate';
import { focusMachine } from '../../machines/focus.js';
import type { LoadedFocus } from '../../machines/focus-context.js';

type GateFocus = { type: 'gate.focus'; until: number | null; now: number };

/** Loads the test settles by hand, in the order they were started. */
const controlledLoads = () => {
  const pending: Array<{ resolve: (value: LoadedFocus) => void; reject: (error: Error) => void }> = [];
  return {
    pending,
    logic: fromPromise<LoadedFocus>(
      () => new Promise<LoadedFocus>((resolve, reject) => pending.push({ resolve, reject })),
    ),
  };
};

/** A system with the focus actor and, unless left out, a gate that records what it is told. */
const harness = (loads: ReturnType<typeof controlledLoads>, { withGate = true } = {}) => {
  const gate = setup({
    types: { context: {} as { told: GateFocus[] }, events: {} as GateFocus },
  }).createMachine({
    context: { told: [] },
    on: { 'gate.focus': { actions: assign(({ context, event }) => ({ told: [...context.told, event] })) } },
  });
  const root = setup({
    actors: { gate, focus: focusMachine.provide({ actors: { loadFocus: loads.logic } }) },
  }).createMachine({
    invoke: [
      ...(withGate ? [{ src: 'gate' as const, systemId: 'gate' }] : []),
      { src: 'focus' as const, systemId: 'focus' },
    ],
  });
  const actor = createActor(root).start();
  const system: ActorSystem<{
    actors: { focus: ActorRefFrom<typeof focusMachine>; gate: ActorRefFrom<typeof gate> };
  }> = actor.system;
  const focus = system.get('focus')!;
  return {
    actor,
    focus,
    told: () => system.get('gate')!.getSnapshot().context.told,
    context: () => focus.getSnapshot().context,
    loaded: (loads: number) => waitFor(focus, (s) => s.context.loads >= loads && s.matches('ready')),
  };
};

describe('the focus actor', () => {
  it('tells the gate the focus it read at start, and keeps it', async () => {
    const loads = controlledLoads();
    const h = harness(loads);
    expect(h.focus.getSnapshot().matches('loading')).toBe(true);
    loads.pending[0]!.resolve({ until: 5_000, now: 1_000 });
    await h.loaded(1);
    expect(h.told()).toEqual([{ type: 'gate.focus', until: 5_000, now: 1_000 }]);
    expect(h.context()).toEqual({ until: 5_000, lastError: null, loads: 1 });
  });

  it('reads again on focus.changed and tells the gate, also when the focus ended', async () => {
    const loads = controlledLoads();
    const h = harness(loads);
    loads.pending[0]!.resolve({ until: 5_000, now: 1_000 });
    await h.loaded(1);
    h.focus.send({ type: 'focus.changed' });
    expect(h.focus.getSnapshot().matches('loading')).toBe(true);
    loads.pending[1]!.resolve({ until: null, now: 2_000 });
    await h.loaded(2);
    expect(h.told().at(-1)).toEqual({ type: 'gate.focus', until: null, now: 2_000 });
    expect(h.context().until).toBeNull();
  });

  it('keeps the last good focus on a failed read, records the error, and tells the gate nothing', async () => {
    const loads = controlledLoads();
    const h = harness(loads);
    loads.pending[0]!.resolve({ until: 5_000, now: 1_000 });
    await h.loaded(1);
    h.focus.send({ type: 'focus.changed' });
    loads.pending[1]!.reject(new Error('focus.json is not valid JSON'));
    await h.loaded(2);
    expect(h.context()).toEqual({ until: 5_000, lastError: 'focus.json is not valid JSON', loads: 2 });
    expect(h.told()).toHaveLength(1);

    // A good read clears the error.
    h.focus.send({ type: 'focus.changed' });
    loads.pending[2]!.resolve({ until: 9_000, now: 3_000 });
    await h.loaded(3);
    expect(h.context()).toEqual({ until: 9_000, lastError: null, loads: 3 });
  });

  it('reads again after the current read when the file changes during it, applying both in order', async () => {
    const loads = controlledLoads();
    const h = harness(loads);
    h.focus.send({ type: 'focus.changed' });
    h.focus.send({ type: 'focus.changed' });
    expect(loads.pending).toHaveLength(1);
    expect(h.focus.getSnapshot().matches({ loading: 'changedMeanwhile' })).toBe(true);
    loads.pending[0]!.resolve({ until: 5_000, now: 1_000 });
    await waitFor(h.focus, () => loads.pending.length === 2);
    expect(h.focus.getSnapshot().matches('loading')).toBe(true);
    expect(h.context().until).toBe(5_000);
    loads.pending[1]!.resolve({ until: 7_000, now: 1_500 });
    await h.loaded(2);
    expect(h.told().map((t) => t.until)).toEqual([5_000, 7_000]);
    expect(loads.pending).toHaveLength(2);
  });

  it('runs without a gate in the system', async () => {
    const loads = controlledLoads();
    const h = harness(loads, { withGate: false });
    loads.pending[0]!.resolve({ until: 5_000, now: 1_000 });
    await h.loaded(1);
    expect(h.context().until).toBe(5_000);
  });

  it('fails loudly when loadFocus is not provided', async () => {
    const focus = createActor(focusMachine).start();
    await waitFor(focus, (s) => s.matches('ready'));
    expect(focus.getSnapshot().context.lastError).toBe('loadFocus not provided');
  });
});
