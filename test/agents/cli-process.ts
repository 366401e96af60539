import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readEvents, waitUntil } from '../support/daemon.js';

/** The JSON objects of a CLI's one-object-a-line output (Claude's stream-json, Codex's --json); other lines are skipped. */
export const jsonLines = <T extends object>(text: string): T[] =>
  text.split('\n').flatMap((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value === 'object' && value !== null ? [value as T] : [];
    } catch {
      return [];
    }
  });

/** SIGKILLs a CLI's whole process group (its shells, hooks, MCP children); a group already gone is fine. */
export const killGroup = (pid: number | undefined) => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {}
};

/** How a CLI run ended, with everything it printed. */
export interface ProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs `bin argv` in `cwd` with exactly `env`, stdin closed, in a process group of its own that is
 * killed on timeout, on `signal`'s abort and again after exit, so no shell, hook or MCP child
 * outlives the CLI.
 */
export const runInGroup = (
  bin: string,
  argv: string[],
  {
    cwd,
    env,
    timeoutMs,
    signal,
  }: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<ProcessRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (data) => {
      stdout += data;
    });
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    const abort = () => killGroup(child.pid);
    signal?.addEventListener('abort', abort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, exitSignal) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      killGroup(child.pid);
      resolve({ code, signal: exitSignal, timedOut, stdout, stderr });
    });
  });

/** A scripted server's request body: parsed JSON, the raw text when it is not JSON, null when empty. */
export const readRequestBody = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  try {
    return raw === '' ? null : JSON.parse(raw);
  } catch {
    return raw;
  }
};

/** Starts `server` on an ephemeral 127.0.0.1 port; `close` drops open connections first. */
export const listenLoopback = async (server: Server) => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { port, close };
};

/** The hash state.json records for a `.pulse/` file, written as the scan that logged it ends. */
const recordedHash = async (project: string, file: string): Promise<string | undefined> => {
  try {
    const state = JSON.parse(await readFile(join(project, '.pulse', 'state.json'), 'utf8'));
    return state.last_hashes?.[file];
  } catch {
    return undefined;
  }
};

/**
 * The user edits a `.pulse/` file in place (as an editor writing over it does); resolves with the id
 * pulse logged for the new text once the scan that logged it has ended. A scan that caught the file
 * between truncation and write logs the empty file first, so the edit's event is the one whose hash
 * is the text's. Waiting for the scan's end keeps the agent's next hook off a scan still writing on
 * a loaded machine, where its 2 s could run out and it would hold as blind, not for the event.
 */
export const userEdits = async (project: string, file: string, text: string): Promise<string> => {
  const sha256 = createHash('sha256').update(text).digest('hex');
  const before = new Set((await readEvents(project)).map((event) => event.id));
  await writeFile(join(project, '.pulse', file), text);
  const id = await waitUntil(
    async () =>
      (await readEvents(project)).find(
        (event) => !before.has(event.id) && event.path === `.pulse/${file}` && event.sha256 === sha256,
      )?.id,
    { describe: () => `pulse to log the edit of .pulse/${file}` },
  );
  await waitUntil(async () => (await recordedHash(project, file)) === sha256 || undefined, {
    describe: () => `pulse to record the hash of .pulse/${file} in state.json`,
  });
  return id;
};
