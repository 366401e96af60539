import { createActor, fromCallback, fromPromise, type InspectionEvent } from 'xstate';
import { eventLogMachine } from '../../machines/event-log.js';
import { focusMachine } from '../../machines/focus.js';
import { gateMachine } from '../../machines/gate.js';
import { GATE_DEFAULTS } from '../../machines/gate-settings.js';
import { inboxMachine } from '../../machines/inbox.js';
import type { InboxEventMessage } from '../../machines/inbox-context.js';
import { notifierMachine } from '../../machines/notifier.js';
import { pollerMachine } from '../../machines/poller.js';
import { type PulseActor, pulseMachine } from '../../machines/pulse.js';
import { replanMachine } from '../../machines/replan.js';
import { HEARD_REFRESH_MS } from '../../machines/replan-agents.js';
import { sourcesMachine } from '../../machines/sources.js';
import { steerMachine } from '../../machines/steer.js';
import type { SteerRequest, SteerWritten } from '../../machines/steer-context.js';
import { watcherMachine } from '../../machines/watcher.js';
import { createItemAcceptor } from '../effects/accept-items.js';
import { createItemFetcher } from '../effects/fetch-items.js';
import { createInboxLoader } from '../effects/load-inbox.js';
import { createJournalLoader } from '../effects/load-journal.js';
import { createSourcesLoader, type SourcesRuntime } from '../effects/load-sources.js';
import { createFolderPoller } from '../effects/poll-folder.js';
import { createReconciler, filesUnchanged } from '../effects/reconcile-files.js';
import { createSourceTester } from '../effects/test-source.js';
import { createFolderWatcher } from '../effects/watch-folder.js';
import { createTrustWatch } from '../effects/watch-trust.js';
import { redactSecrets } from '../log/redact-secrets.js';
import { createDesktopNotifier } from '../notify/desktop-notifier.js';
import { ClientPool } from '../sources/client/client-pool.js';
import { createStderrBudget } from '../sources/client/stderr-budget.js';
import { readingOf } from '../sources/items/reading.js';
import { createEventStamper } from '../store/event-id.js';
import { readFocus } from '../store/focus-file.js';
import { InboxFile } from '../store/inbox-file.js';
import type { PulsePaths } from '../store/paths.js';
import { replacementsSettled } from '../store/replace-file.js';
import { SeenStore } from '../store/seen-store.js';
import { StateFile } from '../store/state-file.js';
import { writeSteerFile } from '../store/steer-file.js';
import { chooseThinker } from '../thinkers/choose-thinker.js';
import type { SamplingClients } from '../thinkers/sampling-clients.js';
import { withTimeout } from '../thinkers/thinker.js';
import { thoughtError } from '../thinkers/thought-error.js';
import { trustCommand } from '../trust/trust-command.js';
import { isTrusted } from '../trust/trust-store.js';
import { drainFromInbox } from './drain-inbox.js';
import { keepStillFilesCheck } from './still-files.js';

/**
 * The inbox's `offerAllSeen` guard: an offer is answered at once only when each of its items was
 * seen before (`isSeen` asks the seen store, in memory).
 */
export const offerAllSeen =
  (isSeen: (source: string, itemId: string) => boolean) =>
  ({ event }: { event: InboxEventMessage }): boolean =>
    event.type === 'inbox.offer' && event.items.every((item) => isSeen(event.source, item.itemId));

export interface PulseSystem {
  actor: PulseActor;
  /** The sources' current secrets (`${VAR}` values, tokens, header values), to redact from what leaves. */
  secrets(): readonly string[];
  /** Stops every actor (the file watcher lets go of its watches as it stops) and closes the source servers' clients. */
  stop(): Promise<void>;
}

/** How bad a diagnostic is: a source server's stderr is `info`, a client failure `warn`, a lost write `error`. */
export type DiagnosticLevel = 'info' | 'warn' | 'error';

/** Where diagnostics go; the message is already redacted of the sources' secrets. */
export type Diagnostics = (level: DiagnosticLevel, message: string, fields?: Record<string, string>) => void;

export interface SystemOptions {
  inspect?: (event: InspectionEvent) => void;
  /** Where diagnostics go (source servers' stderr among them); secrets are redacted first. */
  log?: Diagnostics;
  env?: Record<string, string | undefined>;
  /** The MCP sessions that can sample, for `"thinker": "sampling"`. */
  samplers?: SamplingClients;
  /** An agent's hook session or name unheard for this long is no longer waited for (the MCP session idle limit). */
  agentIdleMs?: number;
  /** Desktop notifications on (`pulse start --notify`). */
  notify?: boolean;
  /** Told of each write through the steer writer that changed a file, before the write is answered (the fleet publishes it). */
  onSteered?: (request: SteerRequest, written: SteerWritten) => Promise<void>;
}

/** The replan's clock: every minute, agents unheard for `idleMs` leave. */
const agentClock = (idleMs: number) =>
  fromCallback(({ sendBack }) => {
    const timer = setInterval(
      () => sendBack({ type: 'agents.sweep', before: Date.now() - idleMs }),
      Math.min(HEARD_REFRESH_MS, idleMs),
    );
    timer.unref();
    return () => clearInterval(timer);
  });

/**
 * Every `.provide()` in one place: the root's provide does not reach child machines, so each
 * child gets its effects here, then the root gets the provided children.
 */
export const createPulseSystem = async (
  paths: PulsePaths,
  {
    inspect,
    log = (_level, message) => console.error(message),
    env = process.env,
    samplers,
    agentIdleMs = 30 * 60_000,
    notify = false,
    onSteered,
  }: SystemOptions = {},
): Promise<PulseSystem> => {
  const { file: stateFile, state } = await StateFile.load(paths.state, paths.projectRoot);
  const stamper = createEventStamper();
  const reconcile = createReconciler({ paths, stamper, stateFile });

  const runtime: SourcesRuntime = { config: null };
  const secrets = () => runtime.config?.secrets ?? [];
  const safeLog: Diagnostics = (level, message, fields) =>
    log(level, redactSecrets(message, secrets()), fields);
  const stderrBudget = createStderrBudget();
  const pool = new ClientPool(
    {},
    {
      onStderr: (server, line) =>
        stderrBudget(server, line, (text) => safeLog('info', text, { source_server: server })),
      onLog: (message) => safeLog('warn', message),
    },
  );
  const seen = await SeenStore.load(paths.seen);
  const inboxFile = new InboxFile(paths.inbox, paths.deadLetters);
  const acceptItems = createItemAcceptor({
    inbox: inboxFile,
    seen,
    storeDetail: () => runtime.config?.storeDetail ?? false,
  });
  const readingOfSource = (name: string) =>
    readingOf(runtime.config?.sources.find((source) => source.name === name));
  const fetchItems = createItemFetcher({ pool, secrets, readingOf: readingOfSource });
  // Keyed by the user's own state, read with the daemon's environment (the user's, never the project's).
  const trusted = (hash: string) => isTrusted(paths.projectRoot, hash, env as NodeJS.ProcessEnv);
  const loadSources = createSourcesLoader({
    path: paths.sources,
    env,
    pool,
    runtime,
    trusted,
    trustCommand: trustCommand(paths.projectRoot),
  });
  const testSource = createSourceTester({ pool, secrets, readingOf: readingOfSource });

  const machine = pulseMachine.provide({
    actors: {
      replan: replanMachine.provide({ actors: { agentClock: agentClock(agentIdleMs) } }),
      eventLog: eventLogMachine.provide({
        actors: {
          loadJournal: fromPromise(createJournalLoader({ paths, stamper, state })),
          reconcileFiles: fromPromise(({ input }) => reconcile(input)),
          saveReplan: fromPromise(({ input }) => stateFile.setReplan(input.ack, input.agents, input.acks)),
        },
        guards: { filesUnchanged: ({ context }) => filesUnchanged(paths, context.files) },
      }),
      watcher: watcherMachine.provide({
        actors: { watchFolder: createFolderWatcher(paths), pollFolder: createFolderPoller(paths) },
      }),
      inbox: inboxMachine.provide({
        actors: {
          loadInbox: fromPromise(createInboxLoader({ inbox: inboxFile, seen })),
          acceptItems: fromPromise(({ input }) => acceptItems(input)),
          persistSettlement: fromPromise(({ input }) =>
            inboxFile.settle(input.settlement, input.deadLetters).catch((error: unknown) => {
              safeLog('error', `Could not record what happened to delivered events: ${error}`);
              throw error;
            }),
          ),
        },
        // Marked recently, not merely seen: an offer answered at once would never refresh the marks.
        guards: { offerAllSeen: offerAllSeen((source, itemId) => seen.markedRecently(source, itemId)) },
      }),
      gate: gateMachine.provide({
        actors: {
          drainInbox: fromPromise(async ({ system }) => ({
            events: await drainFromInbox(system),
            at: Date.now(),
          })),
          // Chosen per thought, so an edit of sources.json (urgency, rules, thinker) counts from the
          // next reflection, and a sampling client that connected meanwhile is asked.
          think: fromPromise(({ input }) => {
            const config = runtime.config;
            const timeoutMs = config?.reflection.gate.thinkTimeoutMs ?? GATE_DEFAULTS.thinkTimeoutMs;
            const { thinker, by, note } = chooseThinker(config, { samplers, timeoutMs });
            return withTimeout(thinker, timeoutMs)
              .think(input.events, input.now)
              .then(
                (judgements) => ({ judgements, by, note, at: Date.now() }),
                (error: unknown) => {
                  const redact = (text: string) => redactSecrets(text, secrets());
                  throw thoughtError(error, { by, at: Date.now(), redact });
                },
              );
          }),
        },
      }),
      focus: focusMachine.provide({
        actors: {
          loadFocus: fromPromise(async () => ({ ...(await readFocus(paths.dir)), now: Date.now() })),
        },
      }),
      notifier: notifierMachine.provide({
        actors: { notifyDesktop: fromPromise(({ input }) => createDesktopNotifier({ env })(input)) },
        guards: { enabled: () => notify },
      }),
      steer: steerMachine.provide({
        actors: {
          writeSteer: fromPromise(async ({ input }) => {
            const written = await writeSteerFile(paths.dir, input);
            if (written.changed) await onSteered?.(input, written);
            return written;
          }),
        },
      }),
      sources: sourcesMachine.provide({
        actors: {
          loadSources: fromPromise(loadSources),
          testSource: fromPromise(({ input }) => testSource(input)),
          watchTrust: createTrustWatch(trusted),
          poller: pollerMachine.provide({
            actors: { fetchItems: fromPromise(({ input }) => fetchItems(input)) },
          }),
        },
      }),
    },
  });
  const actor = createActor(machine, inspect ? { inspect } : {});
  keepStillFilesCheck(actor, (files) => filesUnchanged(paths, files));
  return {
    actor,
    secrets,
    async stop(): Promise<void> {
      actor.stop();
      // A write the stopped actors started (state.json after an ack) still lands, and leaves no temp file.
      await Promise.allSettled([pool.close(), replacementsSettled()]);
    },
  };
};
