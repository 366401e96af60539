import { join } from 'node:path';
import { type Actor, createActor, fromPromise, type InspectionEvent } from 'xstate';
import { eventLogMachine } from '../machines/event-log.js';
import { drainFromInbox, GATE_DEFAULTS, type GateInput, gateMachine } from '../machines/gate.js';
import { inboxMachine } from '../machines/inbox.js';
import { pollerMachine } from '../machines/poller.js';
import { pulseMachine } from '../machines/pulse.js';
import { sourcesMachine } from '../machines/sources.js';
import { watcherMachine } from '../machines/watcher.js';
import { createItemAcceptor } from './effects/accept-items.js';
import { createItemFetcher } from './effects/fetch-items.js';
import { createInboxLoader } from './effects/load-inbox.js';
import { createJournalLoader } from './effects/load-journal.js';
import { createSourcesLoader, type SourcesRuntime } from './effects/load-sources.js';
import { createReconciler } from './effects/reconcile-files.js';
import { createFolderWatcher } from './effects/watch-folder.js';
import { ClientPool } from './sources/client-pool.js';
import { redactSecrets } from './sources/redact.js';
import { createEventStamper } from './store/event-id.js';
import { InboxFile } from './store/inbox-file.js';
import type { PulsePaths } from './store/paths.js';
import { SeenStore } from './store/seen-store.js';
import { StateFile } from './store/state-file.js';
import { createRuleThinker } from './thinkers/rule-thinker.js';
import { withTimeout } from './thinkers/thinker.js';

/** The root actor of one project's system. */
export type PulseActor = Actor<typeof pulseMachine>;

export interface PulseSystem {
  actor: PulseActor;
  /** Stops every actor, the source servers' clients, and waits for the file watcher to let go. */
  stop(): Promise<void>;
}

export interface SystemOptions {
  inspect?: (event: InspectionEvent) => void;
  /** Where diagnostics go (source servers' stderr among them); secrets are redacted first. */
  log?: (line: string) => void;
  env?: Record<string, string | undefined>;
}

const positiveMs = (value: string | undefined): number | undefined => {
  const ms = Number(value);
  return value !== undefined && Number.isFinite(ms) && ms > 0 ? ms : undefined;
};

/**
 * The gate's knobs from the environment: `PULSE_LEASE_MS` (how long a delivery waits for its
 * ack, default 120 000) and `PULSE_COOLDOWN_MS` (minimum time between deliveries, default 0).
 */
export const gateInputFromEnv = (env: Record<string, string | undefined>): GateInput => ({
  leaseMs: positiveMs(env.PULSE_LEASE_MS),
  cooldownMs: positiveMs(env.PULSE_COOLDOWN_MS),
});

/**
 * Every `.provide()` in one place: the root's provide does not reach child machines, so each
 * child gets its effects here, then the root gets the provided children.
 */
export const createPulseSystem = async (
  paths: PulsePaths,
  { inspect, log = (line) => console.error(line), env = process.env }: SystemOptions = {},
): Promise<PulseSystem> => {
  const { file: stateFile, state } = await StateFile.load(paths.state, paths.projectRoot);
  const stamper = createEventStamper();
  const closing: Promise<void>[] = [];
  const reconcile = createReconciler({ paths, stamper, stateFile });

  const runtime: SourcesRuntime = { config: null };
  const secrets = () => runtime.config?.secrets ?? [];
  const safeLog = (line: string) => log(redactSecrets(line, secrets()));
  const pool = new ClientPool(
    {},
    {
      onStderr: (server, line) => safeLog(`[source server ${server}] ${line}`),
      onLog: safeLog,
    },
  );
  const seen = await SeenStore.load(join(paths.dir, 'external_seen.jsonl'));
  const inboxFile = new InboxFile(join(paths.dir, 'inbox.jsonl'), join(paths.dir, 'dead-letters.jsonl'));
  const acceptItems = createItemAcceptor({
    inbox: inboxFile,
    seen,
    storeDetail: () => runtime.config?.storeDetail ?? false,
  });
  const fetchItems = createItemFetcher({ pool, secrets });
  const loadSources = createSourcesLoader({ path: join(paths.dir, 'sources.json'), env, pool, runtime });

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
      inbox: inboxMachine.provide({
        actors: {
          loadInbox: fromPromise(createInboxLoader({ inbox: inboxFile, seen })),
          acceptItems: fromPromise(({ input }) => acceptItems(input)),
        },
        actions: {
          recordDrops: (_, { drops }) => {
            inboxFile
              .drop(drops, new Date().toISOString())
              .catch((error) => safeLog(`Could not record dropped events: ${error}`));
          },
        },
      }),
      gate: gateMachine.provide({
        actors: {
          drainInbox: fromPromise(async ({ input, system }) => ({
            events: await drainFromInbox(system, input.requestId),
            at: Date.now(),
          })),
          // Built per thought, so an edit of sources.json (urgency, rules) counts from the next reflection.
          think: fromPromise(({ input }) =>
            withTimeout(createRuleThinker(runtime.config?.sources ?? []), GATE_DEFAULTS.thinkTimeoutMs).think(
              input.events,
              input.now,
            ),
          ),
        },
        actions: {
          consume: ({ self }, { ids, seq }) => {
            inboxFile.remove(ids, 'consumed').then(
              () => self.send({ type: 'gate.consumeSaved', seq }),
              (error) => {
                safeLog(`Could not record consumed events: ${error}`);
                self.send({ type: 'gate.consumeFailed', seq, message: String(error) });
              },
            );
          },
          recordDeadLetters: (_, { events }) => {
            inboxFile
              .drop(
                events.map((event) => ({ event, reason: 'max_attempts' as const })),
                new Date().toISOString(),
              )
              .catch((error) => safeLog(`Could not record dead letters: ${error}`));
          },
        },
      }),
      sources: sourcesMachine.provide({
        actors: {
          loadSources: fromPromise(loadSources),
          poller: pollerMachine.provide({
            actors: { fetchItems: fromPromise(({ input }) => fetchItems(input)) },
          }),
        },
      }),
    },
  });
  const input = { gate: gateInputFromEnv(env) };
  const actor = createActor(machine, inspect ? { inspect, input } : { input });
  return {
    actor,
    async stop(): Promise<void> {
      actor.stop();
      await Promise.allSettled([...closing, pool.close()]);
    },
  };
};
