import { type Actor, createActor, fromPromise, type InspectionEvent } from 'xstate';
import { eventLogMachine } from '../machines/event-log.js';
import { pulseMachine } from '../machines/pulse.js';
import { watcherMachine } from '../machines/watcher.js';
import { createJournalLoader } from './effects/load-journal.js';
import { createReconciler } from './effects/reconcile-files.js';
import { createFolderWatcher } from './effects/watch-folder.js';
import { createEventStamper } from './store/event-id.js';
import type { PulsePaths } from './store/paths.js';
import { StateFile } from './store/state-file.js';

/** The root actor of one project's system. */
export type PulseActor = Actor<typeof pulseMachine>;

export interface PulseSystem {
  actor: PulseActor;
  /** Stops every actor and waits for the file watcher to let go. */
  stop(): Promise<void>;
}

/**
 * Every `.provide()` in one place: the root's provide does not reach child machines, so each
 * child gets its effects here, then the root gets the provided children.
 */
export const createPulseSystem = async (
  paths: PulsePaths,
  { inspect }: { inspect?: (event: InspectionEvent) => void } = {},
): Promise<PulseSystem> => {
  const { file: stateFile, state } = await StateFile.load(paths.state, paths.projectRoot);
  const stamper = createEventStamper();
  const closing: Promise<void>[] = [];
  const reconcile = createReconciler({ paths, stamper, stateFile });
  const machine = pulseMachine.provide({
    actors: {
      eventLog: eventLogMachine.provide({
        actors: {
          loadJournal: fromPromise(createJournalLoader({ paths, stamper, state })),
          reconcileFiles: fromPromise(({ input }) => reconcile(input)),
          saveAck: fromPromise(({ input }) => stateFile.setAck(input.ack)),
        },
      }),
      watcher: watcherMachine.provide({
        actors: { watchFolder: createFolderWatcher(paths, (promise) => closing.push(promise)) },
      }),
    },
  });
  const actor = createActor(machine, inspect ? { inspect } : {});
  return {
    actor,
    async stop(): Promise<void> {
      actor.stop();
      await Promise.allSettled(closing);
    },
  };
};
