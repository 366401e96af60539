import type { ConnectionCap, ConnectionLimits } from '../http/connection-limits.js';
import { peerAccessSentence } from '../http/same-user.js';
import type { LogLevel } from '../log/levels.js';
import { DEFAULT_PORT } from '../package/defaults.js';
import { pulse } from '../package/pulse-command.js';
import { SETUP_AGENTS } from '../setup/agent-names.js';
import { shellQuote } from '../setup/hook-handlers.js';
import type { PulsePaths } from '../store/paths.js';
import type { SessionLimits } from '../system/session-table.js';
import { formatDuration } from '../text/duration.js';
import { thinkerLine } from '../thinkers/thinker-in-force.js';
import type { NotifyOptions, SourcesAtStart } from './project.js';

/** The HTTP limits in force, as `pulse start` states them. */
export interface HttpLimits extends Omit<ConnectionLimits, 'maxConnections'>, SessionLimits {
  connections: ConnectionCap;
}

/** What `pulse start` says once its project is served, by this process or by the daemon it joined. */
export interface StartFacts {
  paths: PulsePaths;
  url: string;
  port: number;
  /** The inspector's relay page, when started with `inspect`. */
  inspectUrl: string | null;
  /** Whether this start created the project folder itself (it was missing, its parent was not). */
  createdProject: boolean;
  /** Files created on this start (templates, log, state). */
  created: string[];
  /** Connections, timeouts and sessions allowed. */
  limits: HttpLimits;
  /** What sources.json held at start; null when it was still being read after 2 s. */
  sources: SourcesAtStart | null;
  /** `.pulse/pulse.log`, or null when nothing goes to a file (`silent`, or it cannot be written). */
  logFile: string | null;
  logLevel: LogLevel;
  /** Desktop notifications, or null when off. */
  notify: NotifyOptions | null;
  /** Whether every request needs the token; without one, who may call is `peerAccessSentence()`. */
  tokenRequired: boolean;
  /** Set when the project was added to a daemon that already served others. */
  joined?: { pid: number; beside: string[] };
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

const sourcesLine = (sources: SourcesAtStart | null): string => {
  if (sources === null) return `Sources: still reading .pulse/sources.json (see ${pulse('sources list')})`;
  if (sources.untrusted) return `Sources: NOT STARTED: ${sources.untrusted.notice}`;
  if (sources.error !== null) return `Sources: .pulse/sources.json has an error (see ${pulse('status')})`;
  if (sources.sources === 0) return 'Sources: none (.pulse/sources.json)';
  return `Sources: ${plural(sources.sources, 'source')} from ${plural(sources.servers, 'server')}`;
};

/** Who judges external events at start; none without sources, and none to say while sources.json is being read. */
const thinkerLines = (sources: SourcesAtStart | null): string[] =>
  sources?.thinker === undefined || sources.error !== null || sources.sources === 0 || sources.untrusted
    ? []
    : [`Thinker: ${thinkerLine(sources.thinker)}`];

const logLine = ({ logFile, logLevel }: StartFacts): string => {
  if (logFile !== null) return `Log: ${logFile} (--log-level ${logLevel})`;
  if (logLevel === 'silent') return 'Log: off (--log-level silent)';
  return 'Log: on stderr only: .pulse/pulse.log cannot be written (see the warning above)';
};

const connectionsPart = ({ max, fileLimit, loweredFrom }: StartFacts['limits']['connections']): string => {
  if (loweredFrom !== null)
    return `${max} connections (not ${loweredFrom}: half the open-file limit of ${fileLimit} stays free)`;
  return `${max} connections${fileLimit === null ? '' : ` (open-file limit ${fileLimit})`}`;
};

const limitsLine = ({ limits }: StartFacts): string =>
  `Limits: ${connectionsPart(limits.connections)}, headers within ${formatDuration(limits.headersTimeoutMs)}, requests within ${formatDuration(limits.requestTimeoutMs)}; ${limits.maxSessions} MCP sessions, each closed after ${formatDuration(limits.idleMs)} idle`;

/** The exact `pulse setup` line for this daemon: its project and, when it is not the default, its port. */
const setupCommand = ({ paths, port }: StartFacts): string =>
  pulse(
    [
      `setup <${SETUP_AGENTS.join('|')}> --write -p ${shellQuote(paths.projectRoot)}`,
      ...(port === DEFAULT_PORT ? [] : [`--port ${port}`]),
    ].join(' '),
  );

/**
 * What `pulse start` prints once it serves (or the daemon it joined does), a line per fact: the folder watched, what is served
 * where, the sources, the log, the HTTP limits, and how to connect an agent. `MCP endpoint:` is the line scripts
 * wait for.
 */
export const startSummary = (daemon: StartFacts): string[] => {
  const [first, ...rest] = daemon.created;
  const statusPage = new URL('./', daemon.url).href;
  const joined = daemon.joined;
  return [
    ...(joined === undefined
      ? []
      : [
          `Added ${daemon.paths.projectRoot} to the pulse already running on port ${daemon.port} (pid ${joined.pid}), beside ${joined.beside.join(', ') || 'no other project'}: one process serves them all`,
        ]),
    ...(daemon.createdProject ? [`Created the project folder ${daemon.paths.projectRoot}`] : []),
    ...(first === undefined ? [] : [`Created .pulse/${[first, ...rest].join(', ')}`]),
    `Watching ${daemon.paths.dir}`,
    sourcesLine(daemon.sources),
    ...thinkerLines(daemon.sources),
    logLine(daemon),
    limitsLine(daemon),
    `Access: ${daemon.tokenRequired ? 'requests carrying the token (PULSE_TOKEN)' : peerAccessSentence()}`,
    ...(daemon.notify === null
      ? []
      : [
          `Desktop notifications: on (notify-send or osascript): when every agent has replanned, an agent is held over ${formatDuration(daemon.notify.heldAfterMs)}, external events need you`,
        ]),
    ...(daemon.inspectUrl === null
      ? []
      : [
          `Inspector: ${daemon.inspectUrl} (the page embeds stately.ai/inspect, so it needs internet; offline: pulse inspect)`,
        ]),
    `Status page: ${statusPage}`,
    `MCP endpoint: ${daemon.url}`,
    `Connect an agent: ${setupCommand(daemon)}`,
  ];
};
