import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SteerFile, SteerMode } from '../../machines/steer-context.js';
import { daemonServing, ourDaemonOrigin } from '../hooks/find-daemon.js';
import type { SteerAnswer } from '../http/steer-route.js';
import { pulse, shellWord } from '../package/pulse-command.js';
import { tokenHeaders, tokenRefusal } from '../store/daemon-token.js';
import type { PulsePaths } from '../store/paths.js';
import { ensurePulseFolder, requirePulseFolder } from '../store/pulse-folder.js';
import { readBoundedText } from '../store/read-bounded.js';
import {
  overLimit,
  STEER_LIMIT,
  SteerFileError,
  steeredText,
  steerPath,
  writeSteerFile,
} from '../store/steer-file.js';
import { terminalText } from '../text/terminal-text.js';

/** A steer the CLI cannot do, said in a sentence with the fix; the command exits 1. */
export class SteerUsageError extends Error {
  override name = 'SteerUsageError';
}

/** Where the text to write comes from: the argument, stdin (`-`), or an editor on a copy of the file. */
export type TextSource = { text: string } | { stdin: true } | { edit: true };

/** One project written: by its daemon (which logged the event and knows who owes it), or here with no daemon. */
export type SteerOutcome =
  | { by: 'daemon'; answer: SteerAnswer; status: string; stream: string }
  | { by: 'file'; project: string; path: string; changed: boolean; note: string };

const NO_DAEMON_HINT = (root: string) =>
  `no agent is told until pulse runs for it (\`${pulse(`start -p ${shellWord(root)}`)}\`): then every agent that comes owes this change before its next tool call.`;

/** Reads all of stdin as text. */
const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
};

/** The editor to run: $EDITOR, then $VISUAL, then vi. */
const editorOf = (env: NodeJS.ProcessEnv): string => env.EDITOR || env.VISUAL || 'vi';

/**
 * Opens the editor on a temp copy holding `start` (the file's text, or nothing for a paragraph to
 * add) and returns what was saved, or null when it was left as it was. An editor that fails writes nothing.
 */
const editText = async (file: SteerFile, start: string, env: NodeJS.ProcessEnv): Promise<string | null> => {
  const dir = await mkdtemp(join(tmpdir(), 'pulse-steer-'));
  const path = join(dir, `${file}.md`);
  try {
    await writeFile(path, start);
    const editor = editorOf(env);
    // Through the shell, so an EDITOR with arguments ("code --wait") runs as it would there.
    const run = spawnSync('sh', ['-c', `${editor} "$1"`, 'sh', path], { stdio: 'inherit', env });
    if (run.error || run.status !== 0)
      throw new SteerUsageError(
        `The editor (${editor}) ${run.error ? `did not start: ${run.error.message}` : `exited with ${run.status ?? run.signal}`}; nothing was written. Set EDITOR to the editor you use.`,
      );
    const saved = await readFile(path, 'utf8');
    return saved === start ? null : saved;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/**
 * The text to write: the argument, stdin, or what the user saved in the editor (null: the editor
 * left it unchanged, so nothing is written). `--edit` edits the whole file, or with `--append` a
 * new paragraph, starting empty.
 */
export const textToWrite = async (
  source: TextSource,
  {
    paths,
    file,
    mode,
    env = process.env,
  }: { paths: PulsePaths; file: SteerFile; mode: SteerMode; env?: NodeJS.ProcessEnv },
): Promise<string | null> => {
  if ('text' in source) return source.text;
  if ('stdin' in source) return readStdin();
  const current =
    mode === 'append'
      ? ''
      : ((await readBoundedText(steerPath(paths.dir, file), STEER_LIMIT).catch(() => null)) ?? '');
  return editText(file, current, env);
};

/** The answer of a daemon's steer route, or null when no daemon answers at `url`. */
const postSteer = async (
  url: string,
  body: { file: SteerFile; text: string; mode: SteerMode },
): Promise<SteerAnswer | null> => {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { ...tokenHeaders(), 'x-pulse-cli': '1', 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
  } catch {
    return null;
  }
  if (response.status === 401) throw new SteerUsageError(tokenRefusal(new URL(url).origin));
  const answer = (await response.json().catch(() => null)) as (SteerAnswer & { error?: unknown }) | null;
  if (response.ok && answer !== null) return answer;
  // Some other program on the port of a daemon that is gone, or a pulse without this route.
  if (response.status === 404 && typeof answer?.error === 'string' && answer.error.startsWith('No route'))
    throw new SteerUsageError(
      `The daemon at ${new URL(url).origin} is an older pulse without steering: restart it.`,
    );
  if (typeof answer?.error !== 'string') return null;
  throw new SteerUsageError(answer.error);
};

const outcomeOf = (answer: SteerAnswer, steerUrl: string): SteerOutcome => ({
  by: 'daemon',
  answer,
  status: new URL('status', steerUrl).href,
  stream: new URL('status/stream', steerUrl).href,
});

/**
 * Writes guidance or constraints for one project: through the daemon serving it (which logs the
 * change and says who owes it), else here, with the same writer, saying that no agent is told
 * until pulse runs.
 */
export const steerProject = async (
  paths: PulsePaths,
  request: { file: SteerFile; text: string; mode: SteerMode },
  port?: number,
): Promise<SteerOutcome> => {
  requirePulseFolder(paths);
  const discovery = daemonServing(paths.projectRoot, port);
  if (discovery !== null) {
    const url = new URL('steer', discovery.url).href;
    const answer = await postSteer(url, request);
    if (answer !== null) return outcomeOf(answer, url);
  }
  try {
    // A first start takes the files as they are as its baseline: initialised first, the write is a change it logs.
    await ensurePulseFolder(paths);
    const written = await writeSteerFile(paths.dir, request);
    return {
      by: 'file',
      project: paths.projectRoot,
      path: written.path,
      changed: written.changed,
      note: written.changed
        ? `No pulse daemon serves ${paths.projectRoot}: wrote ${written.path} here; ${NO_DAEMON_HINT(paths.projectRoot)}`
        : `${written.path} already says that: nothing changed.`,
    };
  } catch (error) {
    if (error instanceof SteerFileError) throw new SteerUsageError(error.message);
    throw error;
  }
};

interface ServedProject {
  id: string;
  root: string;
}

/**
 * The daemon `--all` steers, as this user's records say: the one on `port` when given (none there
 * is an error), else the one serving the folder, else the newest.
 */
const allOrigin = (cwd: string, port: number | undefined): string => {
  const origin = ourDaemonOrigin(cwd, port);
  if (origin !== null) return origin;
  throw new SteerUsageError(
    `No pulse daemon of yours runs: --all steers every project a running daemon serves. Start one (\`${pulse('start -p <dir>')}\`).`,
  );
};

/** Writes guidance or constraints for every project the daemon serves (the one near `cwd`, else on `port`). */
export const steerAll = async (
  request: { file: SteerFile; text: string; mode: SteerMode },
  { cwd = process.cwd(), port }: { cwd?: string; port?: number } = {},
): Promise<SteerOutcome[]> => {
  const origin = allOrigin(cwd, port);
  const response = await fetch(new URL('/projects', origin), {
    headers: tokenHeaders(),
    signal: AbortSignal.timeout(2000),
  }).catch(() => null);
  if (response?.status === 401) throw new SteerUsageError(tokenRefusal(origin));
  const list = (await response?.json().catch(() => null)) as {
    projects?: ServedProject[];
    name?: string;
  } | null;
  if (list?.name !== 'pulse-agent' || !Array.isArray(list.projects))
    throw new SteerUsageError(
      `No pulse daemon answers at ${origin}: --all steers every project a running daemon serves. Start one (\`${pulse('start -p <dir>')}\`), or name its port with --port N.`,
    );
  if (list.projects.length === 0) throw new SteerUsageError(`The pulse at ${origin} serves no project now.`);
  const outcomes: SteerOutcome[] = [];
  for (const project of list.projects) {
    // Built here, never taken from the answer: the token goes to this origin only.
    const url = `${origin}/p/${encodeURIComponent(project.id)}/steer`;
    const answer = await postSteer(url, request);
    if (answer === null) throw new SteerUsageError(`The pulse at ${origin} stopped answering.`);
    outcomes.push(outcomeOf(answer, url));
  }
  return outcomes;
};

/** What one project's write means, for people: the event, and who must now replan. */
export const formatOutcome = (outcome: SteerOutcome, { prefix = '' }: { prefix?: string } = {}): string => {
  if (outcome.by === 'file') return terminalText(`${prefix}${outcome.note}`);
  const { answer } = outcome;
  const lines = [
    answer.changed
      ? `${prefix}Wrote ${answer.path} (${answer.mode === 'append' ? 'a paragraph added' : 'replaced'}, ${answer.size} bytes) in ${answer.project}${answer.event_id ? `: logged as ${answer.event_id}.` : '.'}`
      : `${prefix}${answer.note}`,
  ];
  if (answer.changed) {
    lines.push(`${prefix}${answer.note}`);
    for (const agent of answer.owing) lines.push(`${prefix}  owes it: ${agent.label}`);
  }
  return lines.map(terminalText).join('\n');
};

/** How long `--wait` waits unless told. */
const DEFAULT_WAIT_MS = 10 * 60_000;

/** `pulse guide` / `pulse constrain` as commander parses them. */
export interface SteerOptions {
  project?: string;
  append?: boolean;
  edit?: boolean;
  wait?: boolean;
  /** With `--wait` (default 10 minutes). */
  timeout?: number;
  all?: boolean;
  port?: number;
  json?: boolean;
}

/**
 * `pulse guide` and `pulse constrain`: the text (argument, `-` for stdin, or `--edit`), written
 * for one project or with `--all` for every project the daemon serves; with `--wait`, each
 * agent's ack and plan diff as it comes. Returns the exit code: 0 done (every agent acknowledged,
 * with `--wait`), 2 written but no daemon runs (`--wait` has nothing to wait for), 3 timed out,
 * 130 Ctrl-C. A refusal throws `SteerUsageError` (exit 1).
 */
export const runSteer = async (
  file: SteerFile,
  text: string | undefined,
  options: SteerOptions,
  { paths, print = console.log }: { paths: PulsePaths; print?: (line: string) => void },
): Promise<number> => {
  if (text !== undefined && options.edit)
    throw new SteerUsageError(`Give the ${file} as an argument or with --edit, not both.`);
  if (text === undefined && !options.edit)
    throw new SteerUsageError(
      `Say what the agents should know: \`${pulse(`${file === 'guidance' ? 'guide' : 'constrain'} "…"`)}\`, \`-\` to read it from stdin, or --edit to write it in $EDITOR.`,
    );
  if (options.all && options.project !== undefined)
    throw new SteerUsageError(
      'Use -p DIR for one project or --all for every project the daemon serves, not both.',
    );
  const mode: SteerMode = options.append ? 'append' : 'replace';
  const source: TextSource = options.edit ? { edit: true } : text === '-' ? { stdin: true } : { text: text! };
  const body = await textToWrite(source, { paths, file, mode });
  if (body === null) {
    print(`The editor left .pulse/${file}.md as it was: nothing written.`);
    return 0;
  }
  // Said here, before a daemon's request limit could answer a huge text in HTTP's words.
  const size = Buffer.byteLength(steeredText(null, body, 'replace'));
  if (size > STEER_LIMIT) throw new SteerUsageError(overLimit(file, size));
  const request = { file, text: body, mode };
  const outcomes = options.all
    ? await steerAll(request, { port: options.port })
    : [await steerProject(paths, request, options.port)];
  const prefixed = outcomes.length > 1;
  if (options.json)
    print(
      JSON.stringify(
        outcomes.map((o) => (o.by === 'daemon' ? o.answer : o)),
        null,
        2,
      ),
    );
  else
    for (const outcome of outcomes)
      print(
        formatOutcome(outcome, {
          prefix: prefixed && outcome.by === 'daemon' ? `[${outcome.answer.project_id}] ` : '',
        }),
      );
  if (!options.wait) return 0;
  const live = outcomes.flatMap((o) => (o.by === 'daemon' && o.answer.event_id !== null ? [o] : []));
  if (outcomes.some((o) => o.by === 'file')) {
    print('Nothing to wait for: no daemon runs, so no agent can acknowledge yet.');
    return 2;
  }
  if (outcomes.some((o) => o.by === 'daemon' && o.answer.changed && o.answer.event_id === null)) return 1;
  const owed = live.filter((o) => o.answer.owing.length > 0 || o.answer.fleet === true);
  if (owed.length === 0) {
    if (live.length > 0)
      print('Nothing to wait for: no agent is working now (the next one to come must replan first).');
    return 0;
  }
  const { waitForAcks } = await import('./steer-wait.js');
  return waitForAcks(owed, { timeoutMs: options.timeout ?? DEFAULT_WAIT_MS, print });
};
