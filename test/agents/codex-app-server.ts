import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { CODEX_BIN, type CodexHome } from './codex.js';

// `codex app-server` speaks JSON-RPC, one JSON object a line, on stdio. The TUI is a client of the
// same server, so what a test does here is what the TUI's own screens (`/hooks`, trust) do.

/** A JSON-RPC answer of the app server. */
export interface AppServerAnswer<T = unknown> {
  id: number;
  result?: T;
  error?: { code: number; message: string; data?: unknown };
}

/** An open app-server session: initialized, ready for requests. */
export interface AppServer {
  request<T = unknown>(method: string, params: unknown): Promise<AppServerAnswer<T>>;
  close(): void;
}

/** Starts `codex app-server` with the temp HOME and CODEX_HOME, and runs its initialize handshake. */
export const openAppServer = async (home: CodexHome): Promise<AppServer> => {
  const child = spawn(CODEX_BIN, ['app-server'], {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home.home, CODEX_HOME: home.codexHome },
  });
  const waiting = new Map<number, (answer: AppServerAnswer) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: Partial<AppServerAnswer>;
    try {
      message = JSON.parse(line) as Partial<AppServerAnswer>;
    } catch {
      return; // not a JSON-RPC message
    }
    if (typeof message.id === 'number') waiting.get(message.id)?.(message as AppServerAnswer);
  });
  let nextId = 0;
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const request = <T>(method: string, params: unknown) =>
    new Promise<AppServerAnswer<T>>((resolve, reject) => {
      const id = ++nextId;
      waiting.set(id, (answer) => resolve(answer as AppServerAnswer<T>));
      child.once('exit', (code) =>
        reject(new Error(`codex app-server exited (${code}) before answering ${method}`)),
      );
      send({ id, method, params });
    });
  await request('initialize', { clientInfo: { name: 'pulse-agent-suite', version: '0' } });
  send({ method: 'initialized' });
  return {
    request,
    close: () => {
      child.stdin.end();
      child.kill('SIGKILL');
    },
  };
};
