import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Logger } from 'pino';
import type { FleetOptions } from '../fleet/fleet-options.js';
import { createDaemonApp } from '../http/app.js';
import { checkTokenPolicy } from '../http/auth.js';
import {
  CONNECTION_DEFAULTS,
  type ConnectionLimits,
  checkTimeouts,
  connectionCap,
  timeoutOptions,
} from '../http/connection-limits.js';
import { type ConnectionCounts, capConnections } from '../http/connection-shedding.js';
import { boundHostNames } from '../http/host-guard.js';
import { openFileLimit } from '../http/open-file-limit.js';
import { type AddedProject, ProjectRefusedError } from '../http/projects-route.js';
import { LOG_LEVELS, type LogLevel } from '../log/levels.js';
import type { Terminal } from '../log/logger.js';
import { announceCodeWarm } from '../package/code-warm.js';
import { DEFAULT_PORT } from '../package/defaults.js';
import { pulsePaths } from '../store/paths.js';
import { projectId } from '../store/project-id.js';
import { SESSION_DEFAULTS } from '../system/session-table.js';
import { portInUseMessage } from './port-holder.js';
import type { NotifyOptions, OpenProject } from './project.js';
import { createProjectHost, type ProjectHost } from './project-host.js';
import { askToServe } from './project-requests.js';
import { createReleaseStack } from './release-stack.js';
import { type HttpLimits, type StartFacts, startSummary } from './start-summary.js';

export interface DaemonOptions {
  project: string;
  host?: string;
  port?: number;
  /** Stream the actor system to the Stately inspector through a local relay. */
  inspect?: boolean;
  /** The relay's port (0 picks a free one). */
  inspectPort?: number;
  /** What is logged, to `.pulse/pulse.log` and the terminal alike. */
  logLevel?: LogLevel;
  /** Where readable log lines go (stderr). */
  terminal?: Terminal;
  /** Every HTTP request must carry it as `Authorization: Bearer`; required off loopback. */
  token?: string | undefined;
  /** More Host names to answer, e.g. a DNS name of this machine (off loopback). */
  allowedHosts?: string[];
  /** Connections open at once; by default 256, fewer when the open-file limit is low. */
  maxConnections?: number;
  /** A request's headers must arrive within this. */
  headersTimeoutMs?: number;
  /** A whole request must arrive within this (a response may stream on). */
  requestTimeoutMs?: number;
  /** MCP sessions held at once. */
  maxSessions?: number;
  /** An MCP session unused (no request, no open stream) for this long is closed. */
  sessionIdleMs?: number;
  /** Desktop notifications (`--notify`) for the project started, and when an agent held counts as news. */
  notify?: NotifyOptions | undefined;
  /** The fleet to join (`--fleet`): every project this daemon serves is a member. */
  fleet?: FleetOptions | undefined;
}

export type { SourcesAtStart } from './project.js';

/** The port is taken; the message names it and says how to pick another. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

/** A daemon this process runs, serving its first project (and those added later). */
export interface Daemon extends StartFacts {
  kind: 'serving';
  host: string;
  /** Repairs and recoveries made while loading (logged as warnings too). */
  warnings: string[];
  /** The first project's logger: JSON lines to `logFile`, readable lines on the terminal. */
  log: Logger;
  /** The projects served. */
  projects: ProjectHost;
  /** Resolves once the last project was removed (`pulse stop`): the process should end. */
  ended: Promise<void>;
  close(): Promise<void>;
}

/** `pulse start` found a pulse on its port and that daemon now serves the project too. */
export interface JoinedDaemon {
  kind: 'joined';
  added: AddedProject;
}

/** How long an idle keep-alive connection stays open: longer than any client keeps one. */
const KEEP_ALIVE_MS = 65_000;

/** A log level a CLI asked for, when it is one. */
const logLevelOf = (level: string | undefined): LogLevel | undefined =>
  (LOG_LEVELS as readonly string[]).includes(level ?? '') ? (level as LogLevel) : undefined;

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

const listen = (
  fetch: Parameters<typeof serve>[0]['fetch'],
  host: string,
  port: number,
  limits: ConnectionLimits,
) =>
  new Promise<{ server: ReturnType<typeof serve>; connections: () => ConnectionCounts }>(
    (resolve, reject) => {
      const server = serve({ fetch, hostname: host, port, serverOptions: timeoutOptions(limits) }, () =>
        resolve({ server, connections }),
      );
      // Before the first connection is accepted.
      const connections = capConnections(server, limits.maxConnections);
      // Node's 5 s default closes idle keep-alive sockets while clients still reuse them, and a
      // call sent on one as it closes fails ("other side closed"). Outlast the clients' own
      // idle timeouts (undici's is 4 s, browsers' and agents' up to a minute), so they close first.
      if ('keepAliveTimeout' in server) server.keepAliveTimeout = KEEP_ALIVE_MS;
      server.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EADDRINUSE') {
          reject(
            new PortInUseError(
              `Port ${port} on ${host} is already in use (another pulse? run \`pulse status\`). Pick another with --port ${port + 1}, or --port 0 for any free port.`,
            ),
          );
        } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
          reject(new Error(`Cannot listen on ${host}: no such local address. Use --host 127.0.0.1.`));
        } else {
          reject(error);
        }
      });
    },
  );

/** The inspector's relay when asked for (loaded only then: off, it costs nothing), else null. */
const startRelay = async (inspect: boolean, port: number, secrets: () => readonly string[]) =>
  inspect ? (await import('../inspect/inspector.js')).startInspecting({ port, secrets }) : null;

/** How long the daemon waits for answers in flight once its last project was removed. */
const ENDING_GRACE_MS = 1000;

/** Stops taking requests and ends every connection and MCP session; on a `pulse stop`, after its answer had a moment. */
const stopServing = async (
  server: ReturnType<typeof serve>,
  closeSessions: () => Promise<void>,
  ending: boolean,
) => {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  if (ending)
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, ENDING_GRACE_MS).unref())]);
  if ('closeAllConnections' in server) server.closeAllConnections();
  await Promise.allSettled([stopped, closeSessions()]);
};

/**
 * Starts the sidecar on a project: HTTP first (a taken port is known before anything is created:
 * when a pulse holds it, that daemon is asked to serve the project too), then the inspector's
 * relay, then the daemon's actor and the project itself (`.pulse/` initialised, its actor system
 * running, its discovery file). A request that reaches the port before the project is served
 * waits for it (`src/http/opening.ts`). Each is registered with its release as it is acquired: a
 * start that fails releases what it acquired, and `close()` releases it all, newest first.
 */
export const startDaemon = async ({
  project,
  host = '127.0.0.1',
  port = DEFAULT_PORT,
  inspect = false,
  inspectPort = 5678,
  logLevel = 'info',
  terminal = process.stderr,
  token,
  allowedHosts = [],
  maxConnections,
  requestTimeoutMs = CONNECTION_DEFAULTS.requestTimeoutMs,
  // The headers are part of the request: a shorter request timeout shortens their default too.
  headersTimeoutMs = Math.min(CONNECTION_DEFAULTS.headersTimeoutMs, requestTimeoutMs),
  maxSessions = SESSION_DEFAULTS.maxSessions,
  sessionIdleMs = SESSION_DEFAULTS.idleMs,
  notify,
  fleet,
}: DaemonOptions): Promise<Daemon | JoinedDaemon> => {
  // Before anything is created: a refused start leaves no trace.
  checkTokenPolicy(host, token);
  const cap = connectionCap(maxConnections, await openFileLimit());
  const connectionLimits = { headersTimeoutMs, requestTimeoutMs, maxConnections: cap.max };
  checkTimeouts(connectionLimits);
  const limits: HttpLimits = {
    headersTimeoutMs,
    requestTimeoutMs,
    connections: cap,
    idleMs: sessionIdleMs,
    maxSessions,
  };
  const paths = pulsePaths(project);
  let connections: () => ConnectionCounts | null = () => null;
  // The first project served, or null when the start failed: a `pulse start` or `pulse stop`
  // that reaches the daemon while it starts waits for it.
  let started: (host: ProjectHost | null) => void = () => undefined;
  const startedHost = new Promise<ProjectHost | null>((resolve) => {
    started = resolve;
  });
  const serving = async () => {
    const host = await startedHost;
    if (host === null)
      throw new ProjectRefusedError('This pulse failed to start and is exiting: start it again.');
    return host;
  };
  const http = createDaemonApp({
    token: token || undefined,
    allowedHosts: [...boundHostNames(host), ...allowedHosts],
    sessionLimits: { idleMs: sessionIdleMs, maxSessions },
    connections: () => connections(),
    control: {
      add: async (request) => {
        const notifyThere =
          request.notifyHeldAfterMs === undefined ? undefined : { heldAfterMs: request.notifyHeldAfterMs };
        return (
          await (
            await serving()
          ).add({
            root: request.root,
            logLevel: logLevelOf(request.logLevel),
            notify: notifyThere,
          })
        ).added;
      },
      remove: async (id) => (await serving()).remove(id),
    },
  });
  // Before the port opens: a client that connects at once waits for the project, not a 404.
  const firstOpened = http.opening(projectId(paths.projectRoot));
  let server: ReturnType<typeof serve>;
  try {
    ({ server, connections } = await listen(http.app.fetch, host, port, connectionLimits));
  } catch (error) {
    if (!(error instanceof PortInUseError)) throw error;
    // A pulse there serves this project too; anything else keeps the port.
    const added = await askToServe({
      host,
      port,
      root: paths.projectRoot,
      logLevel,
      token: token || undefined,
      notifyHeldAfterMs: notify?.heldAfterMs,
    });
    if (added !== null) return { kind: 'joined', added };
    // Who holds the port decides the advice: never a second daemon for this project.
    throw new PortInUseError(portInUseMessage(host, port, paths.dir));
  }
  const releases = createReleaseStack();
  /** Set by a close on `pulse stop`, whose answer is still on the way. */
  let ending = false;
  releases.defer(() => stopServing(server, http.closeSessions, ending));
  const boundPort = (server.address() as AddressInfo).port;
  const origin = `http://${urlHost(host)}:${boundPort}`;
  let secrets: () => readonly string[] = () => [];
  let inspecting: Awaited<ReturnType<typeof startRelay>> = null;
  const facts = (opened: OpenProject): StartFacts => ({
    paths: opened.paths,
    url: opened.url,
    port: boundPort,
    inspectUrl: inspecting?.url ?? null,
    createdProject: opened.createdProject,
    created: opened.created,
    limits,
    sources: opened.sources,
    logFile: opened.logFile,
    logLevel: opened.logLevel,
    notify: opened.notify,
    tokenRequired: Boolean(token),
  });
  let projects: ProjectHost;
  let first: OpenProject;
  try {
    // The relay next, so a taken --inspect-port fails before any project starts, and the inspector
    // is there for the first events.
    const relay = await startRelay(inspect, inspectPort, () => secrets());
    inspecting = relay;
    if (relay !== null) releases.defer(() => relay.close());
    projects = createProjectHost({
      routes: http,
      options: {
        origin,
        logLevel,
        terminal,
        agentIdleMs: sessionIdleMs,
        inspect: inspecting?.inspect,
        fleet,
        discovery: {
          ...(inspecting ? { inspect_url: inspecting.url } : {}),
          // Whether clients need PULSE_TOKEN; never the token itself.
          ...(token ? { token_required: true } : {}),
        },
      },
      inspect: inspecting?.inspect,
      summary: (opened, beside) =>
        startSummary({ ...facts(opened), joined: { pid: process.pid, beside: beside.map((p) => p.id) } }),
    });
    // Every project in the order added; the inspector, released after, sees them stop.
    releases.defer(async () => {
      for (const served of projects.projects()) await projects.remove(served.id).catch(() => undefined);
    });
    secrets = projects.secrets;
    ({ project: first } = await projects.add({ root: paths.projectRoot, logLevel, notify }));
  } catch (error) {
    firstOpened();
    started(null);
    await releases.release();
    // The refusal's message, as the lock or the folder said it.
    throw error instanceof ProjectRefusedError ? new Error(error.message) : error;
  }
  // Its id may differ from the one guessed before the folder existed (a symlink in its path).
  firstOpened();
  started(projects);
  let closing: Promise<void> | null = null;
  const close = (onStop = false) => {
    closing ??= (async () => {
      ending = onStop;
      await releases.release();
      // A daemon stopped before an agent connected still leaves the bundle's code cache.
      announceCodeWarm();
    })();
    return closing;
  };
  const ended = projects.ended.then(() => close(true));
  return {
    kind: 'serving',
    ...facts(first),
    host,
    warnings: first.warnings,
    log: first.log,
    projects,
    ended,
    close: () => close(),
  };
};
