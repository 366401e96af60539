import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonLines, save } from './files.js';
import { groupOf } from './processes.js';
import { saveSources } from './trust.js';

// The fixture MCP server of the source tests (test/fixtures/source-server.mjs): its control
// file, which it re-reads on every call, and the record it appends each initialize and call to.

/** The fixture server's script. */
export const FIXTURE = fileURLToPath(new URL('../fixtures/source-server.mjs', import.meta.url));

/** What the control file can ask of the fixture. */
export interface Control {
  items?: unknown[];
  mode?: 'ok' | 'hang' | 'crash' | 'garbage' | 'isError' | 'huge' | 'deep' | 'raw';
  /** With `raw`: the tool result, sent as it is. */
  result?: unknown;
  delayMs?: number;
  window?: number;
  /** How deep `deep` nests its one item (100,000 levels unless given). */
  depth?: number;
  /** The text of an `isError` answer. */
  errorText?: string;
  /** More tools than list_items, list_events and list_messages, answering as they do. */
  tools?: string[];
  /** Each tool's annotations in `tools/list`, by tool name; a tool left out declares none. */
  annotations?: Record<string, Record<string, unknown>>;
}

/** One line of the fixture's record: an initialize or a call, with the process that served it. */
export interface RecordLine {
  kind: 'initialize' | 'call' | 'answered' | 'grandchild';
  tool?: string;
  args?: Record<string, unknown>;
  headers?: Record<string, string>;
  env: string | null;
  /** With `--grandchild`: the process the server started, which ignores SIGTERM. */
  grandchild?: number;
  pid: number;
  at: number;
}

/**
 * A fixture's control and record files, named after it in `dir`, with its control written
 * (atomically, as every later change is, so the server never reads half of one).
 */
export const fixtureFiles = async (dir: string, name: string, control: Control = {}) => {
  const files = { control: join(dir, `${name}.control.json`), record: join(dir, `${name}.record.jsonl`) };
  const setControl = (next: Control) => save(files.control, JSON.stringify(next), dir);
  await setControl(control);
  return {
    ...files,
    args: ['--control', files.control, '--record', files.record],
    setControl,
    records: () => readJsonLines<RecordLine>(files.record),
    calls: async (filter: (line: RecordLine) => boolean = () => true) =>
      (await readJsonLines<RecordLine>(files.record)).filter((line) => line.kind === 'call' && filter(line)),
  };
};

/**
 * A project whose `.pulse/sources.json` polls one fixture calendar, `cal` (tool `list_events`, every
 * 300 s), listing an event of each title (ids `cal-0`, `cal-1`, …), with an optional `reflection`
 * block; write it before the daemon starts.
 */
export const calendarSource = async (project: string, titles: readonly string[], reflection?: unknown) => {
  const cal = await fixtureFiles(project, 'cal', {
    items: titles.map((title, i) => ({ id: `cal-${i}`, title })),
  });
  await mkdir(join(project, '.pulse'), { recursive: true });
  await saveSources(
    project,
    JSON.stringify({
      mcpServers: { cal: fixtureCommand(cal.args) },
      sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 }],
      reflection,
    }),
  );
  return cal;
};

/** A fixture's files, as `fixtureFiles` returns them. */
export type FixtureFiles = Awaited<ReturnType<typeof fixtureFiles>>;

/** The command and args that run the fixture over stdio with the given flags. */
export const fixtureCommand = (args: readonly string[]) => ({
  command: process.execPath,
  args: [FIXTURE, ...args],
});

/**
 * The command and args that run the fixture over stdio behind a shell that stays its parent
 * (`; :` keeps it from exec'ing node), as wrappers such as npx do.
 */
export const fixtureBehindShell = (args: readonly string[]) => ({
  command: 'sh',
  args: ['-c', '"$0" "$@"; :', process.execPath, FIXTURE, ...args],
});

/** What a fixture run with `--grandchild` recorded: its pid, its grandchild's, and the process group of each. */
export const fixtureFamily = async (files: FixtureFiles) => {
  const line = (await files.records()).find((record) => record.kind === 'grandchild');
  if (line === undefined) throw new Error(`${files.record} holds no grandchild: was --grandchild passed?`);
  const grandchild = line.grandchild!;
  return { server: line.pid, grandchild, group: groupOf(line.pid), grandchildGroup: groupOf(grandchild) };
};

/**
 * Spawns the fixture over streamable HTTP, hands the child to `track` for cleanup, and resolves
 * with the URL it prints.
 */
export const startHttpFixture = (args: readonly string[], track: (child: ChildProcess) => void) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, '--http', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(child);
    let output = '';
    child.stdout!.on('data', (data) => {
      output += data;
      const match = /LISTENING (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on('data', (data) => {
      output += data;
    });
    child.on('exit', (code) => reject(new Error(`the HTTP fixture exited with ${code}:\n${output}`)));
  });
