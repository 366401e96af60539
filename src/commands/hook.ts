import { fstatSync, readFileSync, writeSync } from 'node:fs';
import { askDaemon, HookRefusedError } from '../hooks/ask-daemon.js';
import { type HookAgent, isHookAgent, phaseOf } from '../hooks/events.js';
import { findDaemon } from '../hooks/find-daemon.js';
import { parseHookInput } from '../hooks/hook-input.js';
import { letBeSaying, notEnforcing, oneLine } from '../hooks/hook-output.js';
import { pulse, shellWord } from '../package/pulse-command.js';

/** `pulse hook <agent> [--event NAME] [-p DIR] [--autostart [--port N]]`. */
export interface HookOptions {
  agent: HookAgent;
  event?: string;
  project?: string;
  /** Start the daemon (`pulse start --detach`) when none answers, then answer the hook. */
  autostart?: boolean;
  /** The port the started daemon serves on. */
  port?: number;
}

/** What a hook prints: its answer on stdout, and at most one line on stderr. It always exits 0. */
export interface HookResult {
  stdout: string;
  warning: string | null;
}

/** "Change nothing" for the event the command line names (the input cannot tell), saying why. */
const letBeAsAsked = ({ agent, event }: HookOptions, warning: string): string =>
  letBeSaying(agent, event, event === undefined ? undefined : phaseOf(agent, event), warning);

/**
 * Answers one agent hook where no HTTP client is at hand (Windows, or a setup without curl): finds
 * the project's daemon and forwards the agent's JSON to it; the daemon decides. It fails open: when
 * the input cannot be read or the daemon cannot be asked, it lets the agent go on and says why in
 * one line, for a hook must never wedge an agent.
 */
export const runHook = async (options: HookOptions, stdin: string): Promise<HookResult> => {
  const parsed = parseHookInput(options.agent, options.event, stdin);
  if ('problem' in parsed) {
    const warning = notEnforcing(parsed.problem);
    return { stdout: letBeAsAsked(options, warning), warning };
  }
  const { call } = parsed;
  // The agent that ran the hook, which is VS Code's own when it runs another agent's hook file.
  const { agent } = call;
  let lookup = findDaemon(call.cwd ?? process.cwd(), options.project);
  const unreachable = (why: string): HookResult => {
    const start = pulse(`start -p ${shellWord(lookup.project)}`, { anywhere: true });
    const warning = `${notEnforcing(`daemon not reachable for ${lookup.project} (${why})`)} Start it with: ${start}`;
    return { stdout: letBeSaying(agent, call.event, call.phase, warning), warning };
  };
  if ('problem' in lookup && options.autostart) {
    const { startDaemonFor } = await import('../hooks/autostart.js');
    const project = options.project ?? lookup.project;
    const started = await startDaemonFor(project, options.port).then(
      () => null,
      (error: Error) => `it did not start: ${error.message}`,
    );
    if (started !== null) return unreachable(started);
    lookup = findDaemon(project, project);
  }
  if ('problem' in lookup) return unreachable(lookup.problem);
  try {
    const answer = await askDaemon(lookup.url, {
      agent,
      event: call.event,
      project: lookup.project,
      body: stdin,
    });
    return { stdout: answer, warning: null };
  } catch (error) {
    if (!(error instanceof HookRefusedError)) return unreachable((error as Error).message);
    // It runs, and said no: starting it would not help, its sentence says what would.
    const warning = notEnforcing(error.message);
    return { stdout: letBeSaying(agent, call.event, call.phase, warning), warning };
  }
};

/**
 * The agent's hook JSON, read with one synchronous call: setting up `process.stdin`'s stream
 * costs a few milliseconds on every tool call. A terminal (someone trying the command) sends none.
 */
const readStdin = async (): Promise<string> => {
  if (fstatSync(0).isCharacterDevice()) return '';
  try {
    return readFileSync(0, 'utf8');
  } catch (error) {
    // A host that left our stdin non-blocking, before it wrote: wait for the JSON as a stream.
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
};

/** Runs the hook on this process's stdin, prints its answer, and exits 0. */
export const runHookProcess = async (options: HookOptions): Promise<never> => {
  const { stdout, warning } = await readStdin()
    .then((stdin) => runHook(options, stdin))
    .catch((error: Error): HookResult => {
      const warning = notEnforcing(`the hook failed (${error.message})`);
      return { stdout: letBeAsAsked(options, warning), warning };
    });
  try {
    // One line, whatever a parser or the daemon put in the message. Written synchronously, like
    // stdin, so no stream is set up and all of it is out before the exit.
    if (warning !== null) writeSync(2, `${oneLine(warning)}\n`);
    writeSync(1, `${stdout}\n`);
  } finally {
    // Even when the agent has closed our stdout: a hook never fails the agent's call.
    process.exit(0);
  }
};

/**
 * `pulse hook` runs on every tool call, so the CLI answers it before loading commander: these
 * arguments are read here when they are plainly valid; anything else (help, a typo) returns null
 * and goes to commander, which explains.
 */
export const parseHookArgs = (args: readonly string[]): HookOptions | null => {
  const [agent, ...rest] = args;
  if (agent === undefined || !isHookAgent(agent)) return null;
  const options: HookOptions = { agent };
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--autostart') {
      options.autostart = true;
      continue;
    }
    const [flag, inline] = rest[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = inline ?? rest[++i];
    if (value === undefined || value.startsWith('-')) return null;
    if (flag === '--event') options.event = value;
    else if (flag === '-p' || flag === '--project') options.project = value;
    else if (flag === '--port' && /^\d{1,5}$/.test(value)) options.port = Number(value);
    else return null;
  }
  return options;
};
