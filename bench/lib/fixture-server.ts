import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReadyChild } from './child-process.js';

/** The tests' MCP source server (test/fixtures/source-server.mjs), from dist/bench/lib/ as `npm run bench` runs. */
export const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/source-server.mjs', import.meta.url));

/** Longest wait for `LISTENING <url>`. */
const START_LIMIT_MS = 30_000;

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
  /** Date.now() in the fixture when its handler had the answer; null if it never answered. */
  answeredAt: number | null;
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

/**
 * Writes `<dir>/control.json`, starts the fixture over HTTP on a free port recording to
 * `<dir>/calls.jsonl`, and resolves once it prints its URL.
 */
export const startFixtureServer = async (dir: string, control: FixtureControl): Promise<FixtureServer> => {
  const controlPath = join(dir, 'control.json');
  const recordPath = join(dir, 'calls.jsonl');
  await writeFile(controlPath, JSON.stringify(control));
  const child = await startReadyChild(
    'fixture server',
    [FIXTURE, '--http', '--control', controlPath, '--record', recordPath],
    { ready: /LISTENING (\S+)/, limitMs: START_LIMIT_MS },
  );
  return { pid: child.pid, url: child.announced, recordPath, stop: child.stop };
};

/**
 * The tool calls in a `--record` file, in file order (initialize lines and torn lines skipped),
 * each with the time it was answered: an `answered` line goes to the oldest unanswered call with
 * the same tool and arguments.
 */
export const readRecordedCalls = async (recordPath: string): Promise<RecordedCall[]> => {
  let text: string;
  try {
    text = await readFile(recordPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const calls: RecordedCall[] = [];
  const unanswered = new Map<string, RecordedCall[]>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let row: { kind?: unknown; tool?: unknown; args?: unknown; at?: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof row.at !== 'number' || typeof row.tool !== 'string') continue;
    const args =
      typeof row.args === 'object' && row.args !== null ? (row.args as Record<string, unknown>) : {};
    const key = `${row.tool} ${JSON.stringify(args)}`;
    if (row.kind === 'call') {
      const call: RecordedCall = { tool: row.tool, args, at: row.at, answeredAt: null };
      calls.push(call);
      unanswered.set(key, [...(unanswered.get(key) ?? []), call]);
    } else if (row.kind === 'answered') {
      const call = unanswered.get(key)?.shift();
      if (call) call.answeredAt = row.at;
    }
  }
  return calls;
};
