import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';

/** Whether `nats-server` is on PATH. */
export const natsInstalled = (): boolean => spawnSync('nats-server', ['--version']).status === 0;

/** A real `nats-server -js` on an ephemeral port with its own store, which a test can crash, freeze and restart. */
export interface NatsServer {
  url: string;
  port: number;
  store: string;
  pid(): number;
  /** `kill -9`, waiting until the process is gone. */
  kill9(): Promise<void>;
  /** SIGSTOP: the process stays, its sockets stay open, and nothing answers. */
  freeze(): void;
  /** SIGCONT after `freeze`. */
  thaw(): void;
  /** Starts it again on the same port and store, resolving once a client connects. */
  restart(): Promise<void>;
  /** Stops it for good and removes its store. */
  close(): Promise<void>;
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));

/** Resolves once a NATS client connects to `port`, retrying while the server is still starting. */
const connectable = async (port: number, child: ChildProcess, auth: Auth): Promise<void> => {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`nats-server exited with ${child.exitCode} before it answered`);
    try {
      const nc = await connect({ servers: `127.0.0.1:${port}`, reconnect: false, timeout: 500, ...auth });
      // JetStream answers only once its store is ready: ask for its account info.
      await nc.request('$JS.API.INFO', undefined, { timeout: 1000 });
      await nc.close();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`nats-server on port ${port} did not answer: ${error}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
};

/** Reads the port a `-p -1` server chose from its ports file, waiting for the file. */
const chosenPort = async (dir: string, child: ChildProcess): Promise<number> => {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const file = readdirSync(dir).find((name) => name.endsWith('.ports'));
    if (file) {
      const ports = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nats: string[] };
      return Number(new URL(ports.nats[0]!).port);
    }
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('nats-server wrote no ports file');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** The user and password a server started with `--user`/`--pass` wants. */
type Auth = { user?: string; pass?: string };

/** Starts `nats-server -js` on 127.0.0.1, a port the OS picks, and a temp store; `args` adds options (auth). */
export const startNats = async (args: readonly string[] = []): Promise<NatsServer> => {
  const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const auth: Auth = args.includes('--user') ? { user: flag('--user')!, pass: flag('--pass')! } : {};
  const root = mkdtempSync(join(tmpdir(), 'pulse-nats-'));
  const store = join(root, 'store');
  const run = (port: number) =>
    spawn(
      'nats-server',
      ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store, '--ports_file_dir', root, ...args],
      { stdio: 'ignore' },
    );
  let child = run(-1);
  const port = await chosenPort(root, child);
  await connectable(port, child, auth);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    store,
    pid: () => child.pid!,
    async kill9() {
      child.kill('SIGKILL');
      await exited(child);
    },
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    async restart() {
      child = run(port);
      await connectable(port, child, auth);
    },
    async close() {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited(child);
      rmSync(root, { recursive: true, force: true });
    },
  };
};
