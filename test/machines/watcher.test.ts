import { describe, expect, it } from 'vitest';
import {
  type ActorRefFrom,
  type ActorSystem,
  assign,
  createActor,
  fromCallback,
  SimulatedClock,
  setup,
} from 'xstate';
import { watcherMachine } from '../../machines/watcher.js';
import {
  RETRY_FIRST_MS,
  RETRY_MAX_MS,
  type WatchReport,
  watchRetryDelayMs,
} from '../../machines/watcher-context.js';

type Hint = { type: 'file.changed'; name: string } | { type: 'config.changed' } | { type: 'focus.changed' };

/** An owner (log, sources, focus) that records the hints it is sent. */
const recorder = setup({ types: { context: {} as { hints: Hint[] }, events: {} as Hint } }).createMachine({
  context: { hints: [] },
  on: { '*': { actions: assign(({ context, event }) => ({ hints: [...context.hints, event] })) } },
});

/** The test's system, typed by its map: the three owners registered as stubs, and the watcher. */
type Owner = 'log' | 'sources' | 'focus';
type WatcherSystem = ActorSystem<{
  actors: Record<Owner, ActorRefFrom<typeof recorder>> & { watcher: ActorRefFrom<typeof watcherMachine> };
}>;

/**
 * The watcher with fake effects: each watch try and each poll is a callback actor whose
 * `sendBack` the test holds; `failNextWatches` makes that many tries fail at once, and the others
 * report ready at once unless `readyAtOnce` is false.
 */
const harness = ({ failNextWatches = 0, readyAtOnce = true } = {}) => {
  const tries: Array<(report: WatchReport) => void> = [];
  const polls: Array<{ send: (report: WatchReport) => void; stopped: boolean }> = [];
  let failures = failNextWatches;
  const watchFolder = fromCallback<WatchReport>(({ sendBack }) => {
    tries.push(sendBack);
    if (failures > 0) {
      failures -= 1;
      sendBack({ type: 'watch.error', message: `ENOSPC: System limit for number of file watchers reached` });
    } else if (readyAtOnce) {
      sendBack({ type: 'watch.ready' });
    }
  });
  const pollFolder = fromCallback<WatchReport>(({ sendBack }) => {
    const poll = { send: sendBack, stopped: false };
    polls.push(poll);
    return () => {
      poll.stopped = true;
    };
  });
  const root = setup({
    actors: { owner: recorder, watcher: watcherMachine.provide({ actors: { watchFolder, pollFolder } }) },
  }).createMachine({
    invoke: [
      { src: 'owner', systemId: 'log' },
      { src: 'owner', systemId: 'sources' },
      { src: 'owner', systemId: 'focus' },
      { src: 'watcher', systemId: 'watcher' },
    ],
  });
  const clock = new SimulatedClock();
  const actor = createActor(root, { clock }).start();
  const system: WatcherSystem = actor.system;
  const watcher = system.get('watcher')!;
  const hintsOf = (id: Owner) => system.get(id)!.getSnapshot().context.hints;
  return {
    clock,
    tries,
    polls,
    hintsOf,
    allHints: () => ({ log: hintsOf('log'), sources: hintsOf('sources'), focus: hintsOf('focus') }),
    state: () => watcher.getSnapshot().value,
    context: () => watcher.getSnapshot().context,
  };
};

const RESCAN = {
  log: [{ type: 'file.changed', name: 'unknown' }],
  sources: [{ type: 'config.changed' }],
  focus: [{ type: 'focus.changed' }],
};

describe('the watcher actor', () => {
  it('sends each change to the actor that owns the file, and nothing at a start that works', () => {
    const h = harness();
    expect(h.state()).toBe('watching');
    expect(h.context()).toMatchObject({ down: null, failures: 0 });
    expect(h.allHints()).toEqual({ log: [], sources: [], focus: [] });
    const send = h.tries[0]!;
    send({ type: 'watch.change', name: 'guidance.md' });
    send({ type: 'watch.change', name: 'sources.json' });
    send({ type: 'watch.change', name: 'focus.json' });
    expect(h.allHints()).toEqual({
      log: [{ type: 'file.changed', name: 'guidance.md' }],
      sources: [{ type: 'config.changed' }],
      focus: [{ type: 'focus.changed' }],
    });
    expect(h.context().changesSeen).toBe(3);
  });

  it('polls when the watch cannot be set up, says why, and has every owner look again', () => {
    const h = harness({ failNextWatches: 1 });
    expect(h.state()).toEqual({ polling: 'waiting' });
    expect(h.context()).toMatchObject({
      down: 'ENOSPC: System limit for number of file watchers reached',
      failures: 1,
      errorCount: 1,
    });
    expect(h.polls).toHaveLength(1);
    expect(h.allHints()).toEqual(RESCAN);
    h.polls[0]!.send({ type: 'watch.change', name: 'sources.json' });
    expect(h.hintsOf('sources')).toEqual([{ type: 'config.changed' }, { type: 'config.changed' }]);
  });

  it('tries the watch again after 1 s, 2 s, 4 s … up to 30 s, polling on through the tries', () => {
    const h = harness({ failNextWatches: 8 });
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      expect(h.tries).toHaveLength(attempt);
      const wait = watchRetryDelayMs(attempt);
      h.clock.increment(wait - 1);
      expect(h.tries, `no try before ${wait} ms`).toHaveLength(attempt);
      h.clock.increment(1);
      waits.push(wait);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(RETRY_FIRST_MS).toBe(1000);
    expect(RETRY_MAX_MS).toBe(30_000);
    // The ninth try works; watching then opens a watch of its own.
    expect(h.tries).toHaveLength(10);
    expect(h.state()).toBe('watching');
    expect(h.context()).toMatchObject({ down: null, failures: 0, errorCount: 8 });
    // One poll ran from the first failure to the recovery, so no change fell between two polls;
    // the owners were asked to look again when it failed and when it came back, not on each try.
    expect(h.polls).toHaveLength(1);
    expect(h.polls[0]!.stopped).toBe(true);
    expect(h.hintsOf('sources')).toEqual([...RESCAN.sources, ...RESCAN.sources]);
  });

  it('says it is back only when the new watch reports ready, and has every owner look again then', () => {
    const h = harness({ failNextWatches: 1, readyAtOnce: false });
    h.clock.increment(RETRY_FIRST_MS);
    expect(h.state()).toEqual({ polling: 'retrying' });
    expect(h.context().down).not.toBeNull();
    expect(h.polls[0]!.stopped, 'the poll runs on while the watch is tried').toBe(false);
    h.tries[1]!({ type: 'watch.ready' });
    expect(h.state()).toBe('watching');
    expect(h.context()).toMatchObject({ down: null, failures: 0 });
    expect(h.polls[0]!.stopped).toBe(true);
    // Once on failing, once on recovering.
    expect(h.allHints()).toEqual({
      log: [...RESCAN.log, ...RESCAN.log],
      sources: [...RESCAN.sources, ...RESCAN.sources],
      focus: [...RESCAN.focus, ...RESCAN.focus],
    });
  });

  it('falls back to polling when a working watch fails later, and backs off from 1 s again after it recovered', () => {
    const h = harness();
    h.tries[0]!({ type: 'watch.error', message: 'EMFILE: too many open files, watch' });
    expect(h.state()).toEqual({ polling: 'waiting' });
    expect(h.context()).toMatchObject({ down: 'EMFILE: too many open files, watch', failures: 1 });
    h.clock.increment(RETRY_FIRST_MS);
    expect(h.state()).toBe('watching');
    h.tries.at(-1)!({ type: 'watch.error', message: 'EMFILE again' });
    expect(h.context()).toMatchObject({ down: 'EMFILE again', failures: 1, errorCount: 2 });
    const tries = h.tries.length;
    h.clock.increment(RETRY_FIRST_MS);
    expect(h.tries).toHaveLength(tries + 2);
    expect(h.state()).toBe('watching');
  });

  it('counts an effect that throws as a failed watch', () => {
    const throwing = watcherMachine.provide({
      actors: {
        watchFolder: fromCallback<WatchReport>(() => {
          throw new Error('inotify_init: EMFILE');
        }),
        pollFolder: fromCallback<WatchReport>(() => {}),
      },
    });
    const actor = createActor(throwing, { clock: new SimulatedClock() }).start();
    expect(actor.getSnapshot().value).toEqual({ polling: 'waiting' });
    expect(actor.getSnapshot().context).toMatchObject({ down: 'inotify_init: EMFILE', failures: 1 });
  });
});
