import { basename, join } from 'node:path';
import type { Logger } from 'pino';
import { type InspectionEvent, waitFor } from 'xstate';
import type { PulseActor } from '../../machines/pulse.js';
import type { FleetMember } from '../fleet/fleet-member.js';
import { type FleetOptions, fleetAuthLabel, fleetLabel, fleetSecrets } from '../fleet/fleet-options.js';
import { fleetProjectKey } from '../fleet/project-key.js';
import type { LogLevel } from '../log/levels.js';
import { createLogger, type Terminal } from '../log/logger.js';
import { observeForNotifications } from '../notify/notifications.js';
import { VERSION } from '../package/version.js';
import { acquireDaemonLock } from '../store/daemon-lock.js';
import { writeDaemonRecord } from '../store/daemon-record.js';
import { type PulsePaths, pulsePaths } from '../store/paths.js';
import { projectId, realProjectRoot } from '../store/project-id.js';
import { ensureProjectFolder, ensurePulseFolder } from '../store/pulse-folder.js';
import { observeActivity } from '../system/activity.js';
import { sourceCounts } from '../system/activity-rules.js';
import { logOf, type SourcesRef, sourcesOf } from '../system/ask-actors.js';
import type { UntrustedStatus } from '../system/system-status.js';
import { untrustedOf } from '../system/untrusted-notice.js';
import { createPulseSystem } from '../system/wiring.js';
import { SamplingClients } from '../thinkers/sampling-clients.js';
import { type ThinkerStatus, thinkerInForce } from '../thinkers/thinker-in-force.js';

/** How long opening a project waits for sources.json to be read, to say what it holds. */
const SOURCES_WAIT_MS = 2000;

/** What sources.json held at start, and who judges external events then (no agent is connected yet). */
export interface SourcesAtStart {
  sources: number;
  servers: number;
  error: string | null;
  /** Absent when an older daemon that was asked to serve the project sent the summary. */
  thinker?: ThinkerStatus;
  /** Set when sources.json is not trusted: what was not started and the command that trusts it. */
  untrusted?: UntrustedStatus | null;
}

/** One project a daemon serves: its own lock, files, log and actor system. */
export interface OpenProject {
  id: string;
  paths: PulsePaths;
  /** Its MCP endpoint, as this user's daemon record names it. */
  url: string;
  actor: PulseActor;
  samplers: SamplingClients;
  /** Whether opening it created the project folder itself (it was missing, its parent was not). */
  createdProject: boolean;
  /** Files created on this start (templates, log, state). */
  created: string[];
  /** Repairs and recoveries made while loading (logged as warnings too). */
  warnings: string[];
  /** What sources.json held at start; null when it was still being read after 2 s. */
  sources: SourcesAtStart | null;
  /** The project's logger: JSON lines to `logFile`, readable lines on the terminal. */
  log: Logger;
  /** `.pulse/pulse.log`, or null when nothing goes to a file (`silent`, or it cannot be written). */
  logFile: string | null;
  logLevel: LogLevel;
  /** Desktop notifications (`--notify`), or null when off. */
  notify: NotifyOptions | null;
  /** The sources' secrets, redacted from what the inspector sends. */
  secrets(): readonly string[];
  /** The project in the fleet, or why it stays out; null without `--fleet`. */
  fleet: FleetMember | { refused: string } | null;
  /** Stops its actors, releases its lock and its daemon record; once. */
  close(): Promise<void>;
}

/** Waits (bounded) for the sources supervisor's first read of sources.json, and says what it found. */
const sourcesAtStart = async (ref: SourcesRef | undefined): Promise<SourcesAtStart | null> => {
  if (ref === undefined) return null;
  const read = await waitFor(ref, (s) => !s.matches('loading'), { timeout: SOURCES_WAIT_MS }).catch(
    () => null,
  );
  if (read === null) return null;
  const { context } = read;
  const thinker = thinkerInForce(context.thinker, null, {
    failedInARow: 0,
    lastFailure: null,
    maxAttempts: 0,
    asking: false,
  });
  return { ...sourceCounts(context), error: context.error, thinker, untrusted: untrustedOf(context) };
};

/** Puts the project in the fleet under its key, or says loudly why it stays out (and runs locally). */
const joinFleet = async (
  options: FleetOptions,
  paths: PulsePaths,
  projectId: string,
  actor: PulseActor,
  log: Logger,
): Promise<OpenProject['fleet']> => {
  try {
    const key = await fleetProjectKey(paths.projectRoot, options.projects);
    log.info({ key, server: fleetLabel(options.url), auth: fleetAuthLabel(options) }, 'fleet: joining');
    // Loaded for a fleet only: the NATS client would cost every other start-up its load.
    const { startFleetMember } = await import('../fleet/fleet-member.js');
    return startFleetMember({ options, key, projectId, pulseDir: paths.dir, actor, log });
  } catch (error) {
    const refused = error instanceof Error ? error.message : String(error);
    log.error(`fleet: this project stays out of the fleet: ${refused}`);
    const at = new Date().toISOString();
    const server = fleetLabel(options.url);
    actor.send({
      type: 'fleet.join',
      fleet: {
        server,
        auth: fleetAuthLabel(options),
        key: null,
        machine: '',
        refused,
        since: at,
        members: [],
        applied: {},
        unsent: 0,
        changes: [],
        receipts: [],
      },
    });
    return { refused };
  }
};

/** `pulse start --notify`: desktop notifications, and when an agent held counts as news. */
export interface NotifyOptions {
  heldAfterMs: number;
}

/** What a project needs of the daemon it joins: where it is served and who sees its actors. */
export interface ProjectOptions {
  root: string;
  /** The daemon's base URL (`http://127.0.0.1:8765`). */
  origin: string;
  logLevel: LogLevel;
  terminal: Terminal;
  /** An agent's hook session unheard for this long is no longer waited for (the MCP session idle limit). */
  agentIdleMs?: number | undefined;
  /** The inspector's hook, when the daemon runs with `--inspect`. */
  inspect?: ((event: InspectionEvent) => void) | undefined;
  /** The daemon record's extras: the inspector's page, whether a token is needed. */
  discovery?: { inspect_url?: string; token_required?: boolean };
  /** Desktop notifications for this project (`--notify`); none when undefined. */
  notify?: NotifyOptions | undefined;
  /** Told the sources' secrets as soon as the system exists, before its first poll can reach the inspector. */
  onSecrets?: ((secrets: () => readonly string[]) => void) | undefined;
  /** The fleet this daemon joined (`pulse start --fleet`); none when undefined. */
  fleet?: FleetOptions | undefined;
}

/**
 * Opens one project on a running daemon: the folder and `.pulse/` initialised, its lock taken (one
 * daemon per project), its actor system started and its log loaded, its daemon record written.
 * Throws with the reason, leaving nothing behind; `close()` undoes it all in order.
 */
export const openProject = async ({
  root,
  origin,
  logLevel,
  terminal,
  agentIdleMs,
  inspect,
  discovery = {},
  notify,
  onSecrets,
  fleet: fleetOptions,
}: ProjectOptions): Promise<OpenProject> => {
  const paths = pulsePaths(root);
  const createdProject = await ensureProjectFolder(paths.projectRoot);
  const created = await ensurePulseFolder(paths);
  const id = projectId(paths.projectRoot);
  // One daemon per project: a second one would log each change twice and answer acks apart.
  const lock = await acquireDaemonLock(paths.dir);
  const lockWarnings = lock.replaced === null ? [] : [lock.replaced];
  // The sources' secrets, redacted from every log line, come from the system once it exists.
  let secrets: () => readonly string[] = () => [];
  let fleet: OpenProject['fleet'] = null;
  const fleetSecretList = fleetOptions ? fleetSecrets(fleetOptions) : [];
  const logging = createLogger({
    level: logLevel,
    file: join(paths.dir, 'pulse.log'),
    terminal,
    secrets: () => [...secrets(), ...fleetSecretList],
  });
  const log = logging.logger;
  // Sessions that can sample are found by the MCP layer and asked by the sampling thinker.
  const samplers = new SamplingClients();
  const system = await createPulseSystem(paths, {
    samplers,
    notify: notify !== undefined,
    ...(agentIdleMs === undefined ? {} : { agentIdleMs }),
    ...(inspect ? { inspect } : {}),
    log: (level, message, fields) => log[level](fields ?? {}, message),
    // The fleet member exists once the system does: until then there is nothing to publish.
    onSteered: (request, written) =>
      fleet !== null && 'steered' in fleet ? fleet.steered(request, written) : Promise.resolve(),
  }).catch(async (error) => {
    logging.close();
    await lock.release();
    throw error;
  });
  secrets = system.secrets;
  onSecrets?.(secrets);
  const unobserveActivity = observeActivity(system.actor, log);
  system.actor.start();
  const unobserveNotify =
    notify === undefined
      ? () => undefined
      : observeForNotifications(system.actor, { ...notify, project: basename(paths.projectRoot) }, log);
  const unobserve = () => {
    unobserveNotify();
    unobserveActivity();
  };
  /** Undoes a start that failed after the system was created, and rethrows why. */
  const abandon = async (error: Error): Promise<never> => {
    await system.stop();
    unobserve();
    logging.close();
    await lock.release();
    throw error;
  };
  const loaded = await waitFor(logOf(system.actor), (s) => !s.matches('loading'));
  if (loaded.matches('failed'))
    await abandon(new Error(loaded.context.lastError ?? 'The event log could not be loaded.'));
  const warnings = [...lockWarnings, ...loaded.context.warnings];
  for (const warning of warnings) log.warn(warning);
  const url = `${origin}/p/${id}/mcp`;
  const { hostname, port } = new URL(origin);
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  // The CLI and hooks reach a daemon on loopback only: a wildcard bind is reached there too.
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : hostname;
  try {
    writeDaemonRecord({
      pid: process.pid,
      proc_start: lock.owner.proc_start,
      lock_nonce: lock.owner.nonce,
      project: realProjectRoot(paths.projectRoot),
      host,
      port: Number(port),
      url: `http://${local}:${port}/p/${id}/mcp`,
      version: VERSION,
      started_at: lock.owner.started_at,
      project_id: id,
      ...discovery,
    });
  } catch (error) {
    await abandon(error as Error);
  }
  const sources = await sourcesAtStart(sourcesOf(system.actor));
  log.info({ version: VERSION, project: paths.projectRoot, url }, 'pulse started');
  if (fleetOptions !== undefined) fleet = await joinFleet(fleetOptions, paths, id, system.actor, log);
  let closing: Promise<void> | null = null;
  return {
    id,
    paths,
    url,
    actor: system.actor,
    samplers,
    createdProject,
    created,
    warnings,
    sources,
    log,
    logFile: logging.file,
    logLevel,
    notify: notify ?? null,
    get fleet() {
      return fleet;
    },
    secrets: () => secrets(),
    close() {
      closing ??= (async () => {
        // Each step runs even if one throws.
        if (fleet !== null && 'close' in fleet) await fleet.close().catch(() => undefined);
        await system.stop().catch(() => undefined);
        await lock.release();
        unobserve();
        log.info('pulse stopped');
        logging.close();
      })();
      return closing;
    },
  };
};
