import { sourceBlocked } from '../../machines/sources-decisions.js';
import { untrustedReason } from '../effects/load-sources.js';
import { daemonServing } from '../hooks/find-daemon.js';
import { toolSummary } from '../sources/client/tool-safety.js';
import type { SourcesFile } from '../sources/config/load-config.js';
import { parseSourcesFile, readSourcesFile } from '../sources/config/load-config.js';
import { maskedUrl } from '../sources/config/server-summary.js';
import type { PulsePaths } from '../store/paths.js';
import { serverStatus } from '../system/read-status.js';
import { configErrorEffect, DISABLED_IN_FILE } from '../system/sentences.js';
import type { PollerStatus, ServerStatus, SourcesStatus } from '../system/system-status.js';
import { untrustedStatus } from '../system/untrusted-notice.js';
import { terminalText } from '../text/terminal-text.js';
import { trustCommand } from '../trust/trust-command.js';
import { isTrusted } from '../trust/trust-store.js';
import { trustView } from '../trust/trust-view.js';
import { fetchSystemStatus, formatPoller } from './status.js';

/** What `pulse sources list` shows: from the running daemon, else from the file. */
export interface SourceList extends SourcesStatus {
  running: boolean;
}

const notRunning = (poller: Omit<PollerStatus, 'state'>): PollerStatus => ({
  ...poller,
  state: poller.disabled_reason === null ? 'not running' : 'disabled',
});

/** `pulse sources list`: the running daemon's servers and sources, or those of the file when none runs. */
export const listSources = async (
  paths: PulsePaths,
  env: NodeJS.ProcessEnv,
  port?: number,
): Promise<SourceList> => {
  const discovery = daemonServing(paths.projectRoot, port);
  const live = discovery ? await fetchSystemStatus(discovery) : null;
  if (live) return { running: true, ...live.sources };
  const file = await readSourcesFile(paths.sources);
  if (file !== null && !isTrusted(paths.projectRoot, file.hash, env)) return untrustedList(file, paths);
  const config = file === null ? null : await parseSourcesFile(file, env);
  const summaries = config?.serverSummaries ?? [];
  const pollers = (config?.sources ?? []).map((s) =>
    notRunning({
      source: s.name,
      server: s.server,
      tool: s.tool,
      enabled: s.enabled,
      disabled_reason: s.enabled ? sourceBlocked(s, summaries) : DISABLED_IN_FILE,
      interval_sec: s.intervalMs / 1000,
      polls: 0,
      last_poll_at: null,
      last_duration_ms: null,
      next_poll_at: null,
      last_error: null,
      failures: 0,
      items_seen: 0,
      catch_ups: 0,
      tool_check: null,
    }),
  );
  const servers = summaries.map((server) =>
    serverStatus(
      server,
      server.disabled === null
        ? { state: 'not running', detail: null }
        : { state: 'disabled', detail: server.disabled },
    ),
  );
  const warnings = config?.warnings ?? [];
  return { running: false, untrusted: null, error: null, keeps_last_good: false, warnings, servers, pollers };
};

/** An untrusted file, read as written (nothing expanded): its servers, each with why it does not run. */
const untrustedList = (file: SourcesFile, paths: PulsePaths): SourceList => {
  const command = trustCommand(paths.projectRoot);
  const view = trustView(file.text);
  const detail = untrustedReason(file.hash, command);
  const model = view.model === null ? null : maskedUrl(view.model);
  return {
    running: false,
    untrusted: untrustedStatus(
      { hash: file.hash, command, model },
      view.servers.map((server) => server.name),
    ),
    error: null,
    keeps_last_good: false,
    warnings: [],
    servers: view.servers.map(({ cwd: _cwd, ...server }) =>
      serverStatus({ ...server, disabled: detail }, { state: 'disabled', detail }),
    ),
    pollers: [],
  };
};

/** Names with their values hidden: `A=***, B=***`. */
const hidden = (names: readonly string[], separator: string) =>
  names.map((name) => `${name}${separator}***`).join(', ');

/** One server on one line: name, where it runs, and its state. */
const formatServer = (s: ServerStatus): string => {
  const extras = [
    ...(s.env.length > 0 ? [`env ${hidden(s.env, '=')}`] : []),
    ...(s.headers.length > 0 ? [`headers ${hidden(s.headers, ': ')}`] : []),
  ];
  const where = [`${s.transport}: ${s.target}`, ...extras, `timeout ${s.timeout_sec} s`].join('; ');
  return `- ${s.name} (${where}): ${s.state}${s.detail === null ? '' : `: ${s.detail}`}`;
};

/** One source on a line: what it polls and how its last poll went, or why it does not run; then its tool's annotations. */
const formatSource = (p: PollerStatus, servers: readonly ServerStatus[]): string[] => {
  if (p.disabled_reason === null) {
    const check = p.tool_check;
    const tool = check === null ? [] : [`  tool annotations: ${toolSummary(check)}`];
    const warning = check?.verdict === 'undeclared' ? [`  warning: ${check.message}`] : [];
    return [`- ${formatPoller(p)}`, ...tool, ...warning];
  }
  // The server's line above says why at length.
  const serverDisabled = p.enabled && servers.some((s) => s.name === p.server && s.state === 'disabled');
  const why = serverDisabled ? `its server "${p.server}" is disabled (above)` : p.disabled_reason;
  return [`- ${p.source} (${p.server}.${p.tool}, every ${p.interval_sec}s): disabled: ${why}`];
};

/** The readable form of `pulse sources list`, safe for a terminal. */
export const formatSourceList = (list: SourceList): string => {
  const lines = [
    list.running
      ? 'daemon running: its servers and sources as loaded'
      : 'daemon not running: read from .pulse/sources.json (start it with `pulse start`)',
  ];
  if (list.untrusted) lines.push(`not trusted: ${list.untrusted.notice}`);
  if (list.error) lines.push(`config error: ${list.error} (${configErrorEffect(list.keeps_last_good)})`);
  if (list.servers.length > 0) lines.push('servers:', ...list.servers.map(formatServer));
  if (list.pollers.length === 0) lines.push('no sources configured in .pulse/sources.json');
  else lines.push('sources:', ...list.pollers.flatMap((p) => formatSource(p, list.servers)));
  // A disabled server's line says it already.
  const told = list.servers.flatMap((s) => (s.state === 'disabled' && s.detail !== null ? [s.detail] : []));
  for (const warning of list.warnings)
    if (!told.some((detail) => warning.endsWith(detail))) lines.push(`warning: ${warning}`);
  return lines.map(terminalText).join('\n');
};
