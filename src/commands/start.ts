import { join } from 'node:path';
import type { Daemon, DaemonOptions } from '../daemon/daemon.js';
import { surviveTerminalHangup } from '../daemon/terminal-hangup.js';
import { fleetOptionsOf } from '../fleet/fleet-options.js';
import type { LogLevel } from '../log/levels.js';
import { pulsePaths } from '../store/paths.js';

/** With `--notify`, an agent that has owed an ack this long is news, unless `--notify-held-after` says. */
const DEFAULT_HELD_AFTER_MS = 5 * 60_000;

/** Shutdown must finish within this; past it the process exits anyway. */
const SHUTDOWN_LIMIT_MS = 2000;

/** `pulse start`'s flags, as commander parses them. */
export interface StartOptions {
  project: string;
  detach?: boolean;
  host: string;
  port: number;
  inspect?: boolean;
  inspectPort?: number;
  logLevel: LogLevel;
  token?: string;
  allowedHost?: string[];
  maxConnections?: number;
  headersTimeout?: number;
  requestTimeout?: number;
  maxSessions?: number;
  sessionIdle?: number;
  notify?: boolean;
  notifyHeldAfter?: number;
  /** `--fleet` and its auth flags (each also from its `PULSE_FLEET*` variable). */
  fleet?: string;
  fleetCreds?: string;
  fleetNkey?: string;
  fleetUser?: string;
  fleetCa?: string;
  fleetProject?: string[];
  /** `--trust-sources`: trusted before the daemon starts (src/commands/trust.ts), not a daemon option. */
  trustSources?: string;
}

/**
 * `pulse start --detach`: starts the daemon in the background with the same flags (`args`, the
 * command line after `start`), and returns what to print once its endpoint answers.
 */
export const startInBackground = async (options: StartOptions, args: readonly string[]): Promise<string> => {
  const { startDetached } = await import('../daemon/detach.js');
  const { pulse, shellWord } = await import('../package/pulse-command.js');
  const paths = pulsePaths(options.project);
  const started = await startDetached({
    paths,
    args: args.filter((arg) => arg !== '--detach'),
    token: options.token,
  });
  const stop = pulse(`stop -p ${shellWord(paths.projectRoot)}`);
  return [
    ...started.summary,
    `Running in the background (pid ${started.pid}); its log: ${join(paths.dir, 'pulse.log')}. Stop it with: ${stop}`,
  ].join('\n');
};

const daemonOptions = (options: StartOptions, detached: boolean): DaemonOptions => {
  const {
    detach: _detach,
    allowedHost: allowedHosts = [],
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    sessionIdle: sessionIdleMs,
    notify,
    notifyHeldAfter,
    trustSources: _trustSources,
    fleet,
    fleetCreds,
    fleetNkey,
    fleetUser,
    fleetCa,
    fleetProject,
    ...rest
  } = options;
  return {
    ...rest,
    allowedHosts,
    inspect: options.inspect === true || options.inspectPort !== undefined,
    headersTimeoutMs,
    requestTimeoutMs,
    sessionIdleMs,
    notify: notify ? { heldAfterMs: notifyHeldAfter ?? DEFAULT_HELD_AFTER_MS } : undefined,
    fleet: fleetOptionsOf({ fleet, fleetCreds, fleetNkey, fleetUser, fleetCa, fleetProject }) ?? undefined,
    // In the background every line goes to .pulse/pulse.log only.
    ...(detached ? { terminal: { write: () => true } } : {}),
  };
};

/**
 * `pulse start` in this process: serves until SIGINT, SIGTERM or SIGHUP, then shuts down within
 * `SHUTDOWN_LIMIT_MS`. Rejects when the daemon cannot start (a detached child tells its parent why first).
 */
export const runDaemonUntilSignal = async (options: StartOptions): Promise<void> => {
  const { isDetachedChild, tellParent } = await import('../daemon/detach.js');
  const detached = isDetachedChild();
  const exit = surviveTerminalHangup();
  let daemon: Daemon | null = null;
  let stopping: string | null = null;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = signal;
    if (!daemon) return; // still starting: shut down as soon as it is up
    daemon.log.info(`Received ${signal}; shutting down.`);
    setTimeout(() => exit(0), SHUTDOWN_LIMIT_MS).unref();
    daemon.close().then(
      () => exit(0),
      () => exit(1),
    );
  };
  // Handlers go in before anything is printed: a supervisor may signal as soon as it reads the
  // endpoint line, and without a listener the signal's default action kills us mid-write.
  // `on`, not `once`: were no listener of ours left, signal-exit (under write-file-atomic)
  // would re-raise a second signal during a write and kill the process before shutdown is done.
  // SIGHUP too: a closed terminal sends it, and its default action skips the shutdown.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  const { startDaemon } = await import('../daemon/daemon.js');
  const { startSummary } = await import('../daemon/start-summary.js');
  const result = await startDaemon(daemonOptions(options, detached)).catch(async (error: unknown) => {
    if (detached) await tellParent({ kind: 'failed', message: (error as Error).message });
    throw error;
  });
  if (result.kind === 'joined') {
    // The daemon on the port serves the project now; this process has nothing left to do.
    const { url, summary } = result.added;
    if (detached) {
      await tellParent({ kind: 'ready', url, summary });
      process.disconnect?.();
    } else console.log(summary.join('\n'));
    exit(0);
    return;
  }
  const started = result;
  // `pulse stop` removed the last project: the daemon has closed and the process ends.
  void started.ended.then(() => {
    if (stopping === null) exit(0);
  });
  if (detached) {
    await tellParent({ kind: 'ready', url: started.url, summary: startSummary(started) });
    process.disconnect?.();
  }
  // One write, so a reader waiting for `MCP endpoint:` has every line of the summary with it.
  else console.log(startSummary(started).join('\n'));
  daemon = started;
  if (stopping) {
    const signal = stopping;
    stopping = null;
    stop(signal);
  }
};
