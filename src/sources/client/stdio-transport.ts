import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import {
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import spawn from 'cross-spawn';
import { HAS_PROCESS_GROUPS, ProcessGroup } from './process-group.js';

/** What starts a stdio server. */
export interface StdioServerParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
}

/** How long a server gets to exit on its own once its stdin is closed. */
const STDIN_GRACE_MS = 2_000;
/** How long a group gets between SIGTERM and SIGKILL. */
const TERM_GRACE_MS = 1_000;

/**
 * The SDK's stdio client transport, except that the server leads a process group of its own and
 * closing ends the whole group, so what the server started (through npx, `sh -c`, workers) dies
 * with it. Ours because the SDK's signals only the process it spawned (typescript-sdk#2023).
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr, there before the spawn so that no early line is lost. */
  readonly stderr = new PassThrough();
  readonly #params: StdioServerParams;
  readonly #readBuffer = new ReadBuffer();
  #child: ChildProcess | null = null;
  #group: ProcessGroup | null = null;
  #ending: Promise<void> | null = null;
  #hurry = false;
  #onExit = () => {};
  readonly #exited = new Promise<void>((resolve) => {
    this.#onExit = resolve;
  });

  constructor(params: StdioServerParams) {
    this.#params = params;
  }

  /** Spawns the server; resolves once it runs. */
  start(): Promise<void> {
    if (this.#child !== null) throw new Error('StdioTransport already started');
    const { command, args, env, cwd } = this.#params;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env,
        cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: HAS_PROCESS_GROUPS,
        windowsHide: true,
      });
      this.#child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
        this.#onExit();
      });
      child.on('spawn', () => {
        this.#group = new ProcessGroup(child as ChildProcess & { pid: number });
        resolve();
      });
      child.on('exit', () => {
        this.#onExit();
        // The server gone, whatever it left running in its group goes too.
        void this.close(true);
      });
      child.on('close', () => this.onclose?.());
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stderr?.pipe(this.stderr);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#child?.stdin;
      if (!stdin || this.#ending !== null) return reject(new Error('Not connected'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * Ends the server and its group: stdin closed, then SIGTERM to the group (at once when `hurry`,
   * else once the server had time to exit on its own), then SIGKILL to what is left.
   */
  close(hurry = false): Promise<void> {
    // A hurried close cuts short a gentle one under way (a daemon stop during a reload).
    this.#hurry ||= hurry;
    this.#ending ??= this.#end();
    return this.#ending;
  }

  async #end(): Promise<void> {
    this.#readBuffer.clear();
    const group = this.#group;
    if (group === null) return;
    this.#child?.stdin?.end();
    if (await group.exited(STDIN_GRACE_MS, () => this.#hurry)) return;
    if (!group.signal('SIGTERM') || (await group.exited(TERM_GRACE_MS))) return;
    group.kill();
    // Only the server is awaited now: its exit is an event, while a grandchild, once killed, may
    // stay a zombie until an init that reaps lazily gets to it, and counts in the group till then.
    const timer = setTimeout(() => {
      this.onerror?.(new Error(`process ${this.#child?.pid} did not exit after SIGKILL`));
      this.#onExit();
    }, TERM_GRACE_MS);
    await this.#exited;
    clearTimeout(timer);
  }

  #read(chunk: Buffer) {
    try {
      this.#readBuffer.append(chunk);
    } catch (error) {
      // Past the buffer's limit: what is in it cannot be trusted, nor what comes next.
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (;;) {
      try {
        const message = this.#readBuffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        // One line that is not a message: it is skipped, as the SDK's transport does.
        this.onerror?.(error as Error);
      }
    }
  }
}
