import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { Logger } from 'pino';
import { type AnyActorRef, waitFor } from 'xstate';
import type { SourcesContext } from '../../machines/sources.js';
import { createHttpApp } from '../http/app.js';
import { checkTokenPolicy } from '../http/auth.js';
import {
  CONNECTION_DEFAULTS,
  type ConnectionCap,
  type ConnectionLimits,
  checkTimeouts,
  connectionCap,
  timeoutOptions,
} from '../http/connection-limits.js';
import { type ConnectionCounts, capConnections } from '../http/connection-shedding.js';
import { boundHostNames } from '../http/host-guard.js';
import { openFileLimit } from '../http/open-file-limit.js';
import { SESSION_DEFAULTS, type SessionLimits } from '../http/session-table.js';
import { observeActivity } from '../log/activity.js';
import { sourceCounts } from '../log/activity-rules.js';
import type { LogLevel } from '../log/levels.js';
import { createLogger, type Terminal } from '../log/logger.js';
import { SamplingClients } from '../mcp/sampling-clients.js';
import { DEFAULT_PORT } from '../package/defaults.js';
import { VERSION } from '../package/version.js';
import { acquireDaemonLock } from '../store/daemon-lock.js';
import { removeDiscovery, writeDiscovery } from '../store/discovery-file.js';
import { type PulsePaths, pulsePaths } from '../store/paths.js';
import { ensureProjectFolder, ensurePulseFolder } from '../store/pulse-folder.js';
import { logOf } from '../system/ask-actors.js';
import { createPulseSystem } from '../system/wiring.js';
import { announceCodeWarm } from './code-warm.js';
import { portInUseMessage } from './port-holder.js';

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
}

/** The HTTP limits in force, as `pulse start` states them. */
export interface HttpLimits extends Omit<ConnectionLimits, 'maxConnections'>, SessionLimits {
  connections: ConnectionCap;
}

/** How long the start waits for sources.json to be read, to say what it holds. */
const SOURCES_WAIT_MS = 2000;

/** What sources.json held at start. */
export interface SourcesAtStart {
  sources: number;
  servers: number;
  error: string | null;
}

/** The port is taken; the message names it and says how to pick another. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

export interface Daemon {
  paths: PulsePaths;
  url: string;
  host: string;
  port: number;
  /** The inspector's relay page, when started with `inspect`. */
  inspectUrl: string | null;
  /** Whether this start created the project folder itself (it was missing, its parent was not). */
  createdProject: boolean;
  /** Files created on this start (templates, log, state). */
  created: string[];
  /** Repairs and recoveries made while loading (logged as warnings too). */
  warnings: string[];
  /** Connections, timeouts and sessions allowed. */
  limits: HttpLimits;
  /** What sources.json held at start; null when it was still being read after 2 s. */
  sources: SourcesAtStart | null;
  /** The daemon's logger: JSON lines to `logFile`, readable lines on the terminal. */
  log: Logger;
  /** `.pulse/pulse.log`, or null when nothing goes to a file (`silent`, or it cannot be written). */
  logFile: string | null;
  logLevel: LogLevel;
  close(): Promise<void>;
}

/** Waits (bounded) for the sources supervisor's first read of sources.json, and says what it found. */
const sourcesAtStart = async (ref: AnyActorRef | undefined): Promise<SourcesAtStart | null> => {
  if (ref === undefined) return null;
  const read = await waitFor(ref, (s) => !s.matches('loading'), { timeout: SOURCES_WAIT_MS }).catch(
    () => null,
  );
  if (read === null) return null;
  const context = read.context as SourcesContext;
  return { ...sourceCounts(context), error: context.error };
};

/** How long an idle keep-alive connection stays open: longer than any client keeps one. */
const KEEP_ALIVE_MS = 65_000;

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

/**
 * Starts the sidecar on a project: `.pulse/` initialised, the actor system running, MCP
 * served over HTTP, a discovery file written. `close()` undoes it all in order.
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
}: DaemonOptions): Promise<Daemon> => {
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
  const createdProject = await ensureProjectFolder(paths.projectRoot);
  const created = await ensurePulseFolder(paths);
  // One daemon per project: a second one would log each change twice and answer acks apart.
  const lock = await acquireDaemonLock(paths.dir);
  // The sources' secrets, redacted from what the inspector sends and from every log line, come
  // from the system once it exists.
  let secrets: () => readonly string[] = () => [];
  const logging = createLogger({
    level: logLevel,
    file: join(paths.dir, 'pulse.log'),
    terminal,
    secrets: () => secrets(),
  });
  const log = logging.logger;
  // The relay comes first, so a taken --inspect-port fails before anything starts, and the
  // inspector is there for the system's first events. Loaded only then: off, it costs nothing.
  const inspecting = inspect
    ? await import('../inspect/inspector.js')
        .then(({ startInspecting }) => startInspecting({ port: inspectPort, secrets: () => secrets() }))
        .catch(async (error) => {
          logging.close();
          await lock.release();
          throw error;
        })
    : null;
  // Sessions that can sample are found by the MCP layer and asked by the sampling thinker.
  const samplers = new SamplingClients();
  const system = await createPulseSystem(paths, {
    samplers,
    agentIdleMs: sessionIdleMs,
    ...(inspecting ? { inspect: inspecting.inspect } : {}),
    log: (level, message, fields) => log[level](fields ?? {}, message),
  }).catch(async (error) => {
    await inspecting?.close();
    logging.close();
    await lock.release();
    throw error;
  });
  secrets = system.secrets;
  const unobserve = observeActivity(system.actor, log);
  const abandon = async () => {
    await system.stop();
    unobserve();
    await inspecting?.close();
    logging.close();
    await lock.release();
  };
  system.actor.start();
  const loaded = await waitFor(logOf(system.actor), (s) => !s.matches('loading'));
  if (loaded.matches('failed')) {
    await abandon();
    throw new Error(loaded.context.lastError ?? 'The event log could not be loaded.');
  }
  for (const warning of loaded.context.warnings) log.warn(warning);
  let connections: () => ConnectionCounts | null = () => null;
  const { app, closeSessions } = createHttpApp({
    actor: system.actor,
    projectRoot: paths.projectRoot,
    token: token || undefined,
    allowedHosts: [...boundHostNames(host), ...allowedHosts],
    sessionLimits: { idleMs: sessionIdleMs, maxSessions },
    connections: () => connections(),
    samplers,
  });
  let server: ReturnType<typeof serve>;
  try {
    ({ server, connections } = await listen(app.fetch, host, port, connectionLimits));
  } catch (error) {
    await abandon();
    // Who holds the port decides the advice: never a second daemon for this project.
    if (error instanceof PortInUseError) throw new PortInUseError(portInUseMessage(host, port, paths.dir));
    throw error;
  }
  const boundPort = (server.address() as AddressInfo).port;
  const url = `http://${urlHost(host)}:${boundPort}/mcp`;
  await writeDiscovery(paths.dir, {
    pid: process.pid,
    host,
    port: boundPort,
    url,
    version: VERSION,
    started_at: new Date().toISOString(),
    ...(inspecting ? { inspect_url: inspecting.url } : {}),
    // Whether clients need PULSE_TOKEN; never the token itself.
    ...(token ? { token_required: true } : {}),
  });
  const sources = await sourcesAtStart(system.actor.system.get('sources') as AnyActorRef | undefined);
  log.info({ version: VERSION, project: paths.projectRoot, url }, 'pulse started');
  let closing: Promise<void> | null = null;
  return {
    paths,
    url,
    host,
    port: boundPort,
    inspectUrl: inspecting?.url ?? null,
    createdProject,
    created,
    warnings: loaded.context.warnings,
    limits,
    sources,
    log,
    logFile: logging.file,
    logLevel,
    close() {
      closing ??= (async () => {
        // HTTP first (no new requests), then MCP sessions, then the actors, then the inspector
        // (it saw them stop); each step runs even if one throws.
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        if ('closeAllConnections' in server) server.closeAllConnections();
        await Promise.allSettled([stopped, closeSessions()]);
        await Promise.allSettled([system.stop(), removeDiscovery(paths.dir)]);
        await lock.release();
        unobserve();
        await inspecting?.close().catch(() => undefined);
        log.info('pulse stopped');
        logging.close();
        // A daemon stopped before an agent connected still leaves the bundle's code cache.
        announceCodeWarm();
      })();
      return closing;
    },
  };
};
