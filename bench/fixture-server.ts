import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The tests' MCP source server (test/fixtures/source-server.mjs), from dist/bench/ as `npm run bench` runs. */
export const FIXTURE = fileURLToPath(new URL('../../test/fixtures/source-server.mjs', import.meta.url));

/** Longest wait for `LISTENING <url>`. */
const START_LIMIT_MS = 30_000;
/** How much of the fixture's stderr to keep for an error message. */
const KEEP_OUTPUT = 4_000;

/** What the fixture reads from its control file on every call (see its `answer`). */
export interface FixtureControl {
  items?: unknown[];
  delayMs?: number;
}

/** One tool call as the fixture's `--record` file logs it. */
export interface RecordedCall {
  tool: string;
  args: Record<string, unknown>;
  /** Date.now() in the fixture when its handler ran. */
  at: number;
}

/** A `source-server.mjs --http` child process. */
export interface FixtureServer {
  pid: number;
  /** Its MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The `--record` file: one JSON line per call. */
  recordPath: string;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** SIGKILLs every fixture still running; synchronous, so it also works in an `exit` handler. */
export const killAllFixtures = (): void => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
};

/**
 * Writes `<dir>/control.json`, starts the fixture over HTTP on a free port recording to
 * `<dir>/calls.jsonl`, and resolves once it prints its URL.
 */
export const startFixtureServer = async (dir: string, control: FixtureControl): Promise<FixtureServer> => {
  const controlPath = join(dir, 'control.json');
  const recordPath = join(dir, 'calls.jsonl');
  await writeFile(controlPath, JSON.stringify(control));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [FIXTURE, '--http', '--control', controlPath, '--record', recordPath],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    running.add(child);
    let listening = false;
    let output = '';
    const keep = (data: unknown) => {
      output = `${output}${data}`.slice(-KEEP_OUTPUT);
    };
    const fail = (why: string) => {
      child.kill('SIGKILL');
      reject(new Error(`fixture server ${why}:\n${output}`));
    };
    const timer = setTimeout(() => fail(`printed no URL within ${START_LIMIT_MS} ms`), START_LIMIT_MS);
    const exited = new Promise<void>((done) =>
      child.once('exit', (code, signal) => {
        running.delete(child);
        clearTimeout(timer);
        if (!listening) fail(`exited (${code ?? signal}) before listening`);
        done();
      }),
    );
    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.stderr.on('data', keep);
    child.stdout.on('data', (data) => {
      keep(data);
      if (listening) return;
      const match = /LISTENING (\S+)/.exec(output);
      if (!match) return;
      listening = true;
      clearTimeout(timer);
      resolve({
        pid: child.pid!,
        url: match[1]!,
        recordPath,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
};

/** The tool calls in a `--record` file, in file order (initialize lines and torn lines skipped). */
export const readRecordedCalls = async (recordPath: string): Promise<RecordedCall[]> => {
  let text: string;
  try {
    text = await readFile(recordPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const calls: RecordedCall[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let row: { kind?: unknown; tool?: unknown; args?: unknown; at?: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (row.kind !== 'call' || typeof row.at !== 'number' || typeof row.tool !== 'string') continue;
    const args =
      typeof row.args === 'object' && row.args !== null ? (row.args as Record<string, unknown>) : {};
    calls.push({ tool: row.tool, args, at: row.at });
  }
  return calls;
};
