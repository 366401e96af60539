import { lstat, stat } from 'node:fs/promises';
import { daemonServing } from '../hooks/find-daemon.js';
import { pulse, shellWord } from '../package/pulse-command.js';
import { focusPath, formatFocusEnd, readFocus, writeFocus } from '../store/focus-file.js';
import type { PulsePaths } from '../store/paths.js';
import { ProjectFolderError } from '../store/pulse-folder.js';
import type { SystemStatus } from '../system/system-status.js';
import { fetchSystemStatus } from './status.js';

const MAX_FOCUS_MS = 7 * 24 * 3600_000;
const FORMS =
  'Expected a duration such as 45m, 90s, 2h, 1h30m or 7d (a bare number is minutes), at most 7 days, or `off` to end the focus.';

/** `pulse focus` was given something that is neither a duration nor `off`. */
export class FocusUsageError extends Error {
  override name = 'FocusUsageError';
}

/** `off`, or the duration in ms of `45m`, `90s`, `2h`, `1h30m`, `7d` or a bare number of minutes. */
export const parseFocusDuration = (text: string): number | 'off' => {
  const value = text.trim().toLowerCase();
  if (value === 'off') return 'off';
  const bare = /^\d+$/.test(value);
  const parts = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value);
  if (!bare && (parts === null || value === ''))
    throw new FocusUsageError(`"${text}" is not a duration. ${FORMS}`);
  const [, d = 0, h = 0, m = 0, s = 0] = parts ?? [];
  const ms = bare
    ? Number(value) * 60_000
    : Number(d) * 24 * 3600_000 + Number(h) * 3600_000 + Number(m) * 60_000 + Number(s) * 1000;
  if (ms <= 0) throw new FocusUsageError(`"${text}" is no time at all. ${FORMS}`);
  if (ms > MAX_FOCUS_MS) throw new FocusUsageError(`"${text}" is longer than 7 days. ${FORMS}`);
  return ms;
};

/** What `pulse focus` did, and what the running daemon (if any) made of it. */
export interface FocusResult {
  project: string;
  file: string;
  action: 'set' | 'off' | 'show';
  /** The focus end in the file, ISO 8601; null when there is no focus. */
  until: string | null;
  /** With `off`: whether there was a focus file to remove. */
  removed?: boolean;
  daemon: {
    running: boolean;
    url: string | null;
    /** The daemon's focus end, as its `/status` last said. */
    until: string | null;
    /** Whether the daemon holds the focus the file says; null when none runs. */
    picked_up: boolean | null;
    last_error: string | null;
  };
  warning: string | null;
}

const requireFolder = async (paths: PulsePaths): Promise<void> => {
  const isDir = (path: string) =>
    stat(path).then(
      (info) => info.isDirectory(),
      () => false,
    );
  if (!(await isDir(paths.projectRoot))) {
    throw new ProjectFolderError(
      `Project folder ${paths.projectRoot} does not exist. Create it, or pass an existing folder with --project DIR.`,
    );
  }
  if (!(await isDir(paths.dir))) {
    throw new ProjectFolderError(
      `${paths.dir} does not exist. Create it with \`${pulse(`init -p ${shellWord(paths.projectRoot)}`)}\`, or start the daemon with \`${pulse(`start -p ${shellWord(paths.projectRoot)}`)}\`.`,
    );
  }
};

/** Polls the daemon's `/status` until its focus is `until`, or the time is up; the last status read, or null if none answered. */
const awaitDaemonFocus = async (
  url: Parameters<typeof fetchSystemStatus>[0],
  until: string | null,
  { timeoutMs, intervalMs }: { timeoutMs: number; intervalMs: number },
): Promise<SystemStatus | null> => {
  const deadline = Date.now() + timeoutMs;
  let last: SystemStatus | null = null;
  for (;;) {
    const status = await fetchSystemStatus(url);
    if (status === null) return last;
    last = status;
    if (status.focus?.until === until || Date.now() >= deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};

/**
 * `pulse focus [duration]`: sets (`45m`), ends (`off`) or shows (no argument) the focus in
 * `.pulse/focus.json`, then waits (bounded) for a running daemon to hold the same focus.
 */
export const runFocus = async (
  paths: PulsePaths,
  duration: string | undefined,
  {
    now = Date.now(),
    timeoutMs = 3000,
    intervalMs = 50,
    port,
  }: { now?: number; timeoutMs?: number; intervalMs?: number; port?: number } = {},
): Promise<FocusResult> => {
  const parsed = duration === undefined ? undefined : parseFocusDuration(duration);
  await requireFolder(paths);
  let untilMs: number | null;
  let removed: boolean | undefined;
  if (parsed === 'off') removed = (await lstat(focusPath(paths.dir)).catch(() => null)) !== null;
  if (parsed === undefined) {
    untilMs = (await readFocus(paths.dir, now)).until;
  } else {
    untilMs = parsed === 'off' ? null : now + parsed;
    await writeFocus(paths.dir, untilMs);
  }
  const until = untilMs === null ? null : new Date(untilMs).toISOString();
  const result: FocusResult = {
    project: paths.projectRoot,
    file: focusPath(paths.dir),
    action: parsed === undefined ? 'show' : parsed === 'off' ? 'off' : 'set',
    until,
    ...(removed === undefined ? {} : { removed }),
    daemon: { running: false, url: null, until: null, picked_up: null, last_error: null },
    warning: null,
  };
  const discovery = daemonServing(paths.projectRoot, port);
  const live = discovery ? await awaitDaemonFocus(discovery, until, { timeoutMs, intervalMs }) : null;
  if (discovery === null || live === null) return result;
  const picked = live.focus !== undefined && live.focus.until === until;
  result.daemon = {
    running: true,
    url: discovery.url,
    until: live.focus?.until ?? null,
    picked_up: picked,
    last_error: live.focus?.last_error ?? null,
  };
  if (!picked) {
    result.warning =
      live.focus === undefined
        ? `The daemon at ${discovery.url} (pulse ${discovery.version}) does not know about focus; restart it with \`${pulse(`start -p ${shellWord(paths.projectRoot)}`)}\` to apply it.`
        : `The daemon at ${discovery.url} did not pick up the focus within ${timeoutMs / 1000} s: it holds ${live.focus.until ? `external events until ${live.focus.until}` : 'no focus'}. ` +
          (live.focus.last_error
            ? `Its focus error: ${live.focus.last_error}`
            : `Check that it serves ${paths.projectRoot} (\`${pulse(`status -p ${shellWord(paths.projectRoot)}`)}\`) and watches ${result.file}.`);
  }
  return result;
};

/** The readable form of a focus result; the warning, if any, is printed apart. */
export const formatFocus = (result: FocusResult): string => {
  const lines = [
    result.until === null
      ? result.action === 'off'
        ? result.removed
          ? `Focus off (${result.file} removed).`
          : `No focus to end: ${result.file} does not exist, so external events are delivered as they come.`
        : 'No focus: external events are delivered as they come.'
      : `Focus until ${formatFocusEnd(result.until)}${result.action === 'set' ? `, written to ${result.file}` : ''}.`,
  ];
  if (!result.daemon.running) {
    lines.push(
      result.until === null
        ? 'No daemon is running; it starts without a focus.'
        : 'No daemon is running; the focus applies when it starts.',
    );
  } else if (result.daemon.picked_up) {
    lines.push(
      result.until === null
        ? 'The daemon holds nothing back: external events are delivered as they come.'
        : `The daemon holds external events until ${formatFocusEnd(result.until)}.`,
    );
  }
  return lines.join('\n');
};
