import { createWebSocketReceiver, type StatelyInspectionEvent } from '@statelyai/inspect';
import { daemonServing } from '../hooks/find-daemon.js';
import { pulse, shellWord } from '../package/pulse-command.js';
import type { PulsePaths } from '../store/paths.js';

/** No relay answers: the daemon is not running, or runs without `--inspect`. */
export class NoInspectorError extends Error {
  override name = 'NoInspectorError';
}

const how = (paths: PulsePaths) =>
  `Start the daemon with \`${pulse(`start --inspect -p ${shellWord(paths.projectRoot)}`)}\``;

/** Where to find the relay: its own port (`--inspect-port`), else the daemon's record (on `port`, when named). */
export interface RelayChoice {
  inspectPort?: number;
  port?: number;
}

/** The relay's page URL: from `--inspect-port`, else from the running daemon's record. */
export const findRelay = async (
  paths: PulsePaths,
  { inspectPort, port }: RelayChoice = {},
): Promise<string> => {
  if (inspectPort !== undefined) return `http://127.0.0.1:${inspectPort}`;
  const discovery = daemonServing(paths.projectRoot, port);
  if (discovery === null)
    throw new NoInspectorError(`No daemon runs for ${paths.projectRoot}. ${how(paths)}.`);
  if (!discovery.inspect_url) {
    throw new NoInspectorError(
      `The daemon for ${paths.projectRoot} (pid ${discovery.pid}) runs without an inspector. Restart it with \`${pulse(`start --inspect -p ${shellWord(paths.projectRoot)}`)}\`.`,
    );
  }
  return discovery.inspect_url;
};

const answers = async (url: string) => {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
};

/**
 * `pulse inspect`: finds the relay, checks that it answers (the library's receiver has no
 * error handler, so a refused connection would crash it), then hands every inspection event
 * the relay sends (the last 200 first) to `onEvent`. Resolves with the relay's URL.
 */
export const watchInspector = async ({
  paths,
  onEvent,
  ...choice
}: RelayChoice & {
  paths: PulsePaths;
  onEvent: (event: StatelyInspectionEvent) => void;
}): Promise<string> => {
  const url = await findRelay(paths, choice);
  if (!(await answers(url))) {
    throw new NoInspectorError(
      `No inspector answers at ${url}. ${how(paths)}${choice.inspectPort === undefined ? '' : ` --inspect-port ${choice.inspectPort}`}.`,
    );
  }
  createWebSocketReceiver({ server: url.replace(/^http/, 'ws') }).subscribe(onEvent);
  return url;
};

/**
 * `pulse inspect`: prints each actor event as it happens (a line, or raw JSON with `json`) until
 * the daemon stops or a signal comes.
 */
export const runInspect = async ({
  paths,
  json = false,
  ...choice
}: RelayChoice & {
  paths: PulsePaths;
  json?: boolean;
}): Promise<void> => {
  const { createEventFormatter } = await import('../inspect/format-event.js');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
  const format = createEventFormatter();
  const url = await watchInspector({
    paths,
    ...choice,
    onEvent: (event) => {
      const line = json ? JSON.stringify(event) : format(event);
      if (line !== null) console.log(line);
    },
  });
  // On stderr, so that --json output stays one JSON object a line.
  console.error(`Inspecting ${url} (Ctrl-C to stop)`);
  process.once('beforeExit', () => console.error('The inspector closed (the daemon stopped).'));
};
