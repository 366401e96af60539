import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { trackStarted } from '../support/started.js';
import { type ScriptedChatModel, type Step, startScriptedChatModel } from './chat-model.js';
import { killGroup } from './cli-process.js';
import {
  makeOpencodeHome,
  OPENCODE_BIN,
  type OpencodeHome,
  type OpencodeRun,
  opencodeConfig,
  opencodeEnv,
  runOpencode,
  seedPluginDependencies,
} from './opencode.js';
import { type PulseProject, pulseProjectFor } from './pulse-project.js';

// The scene of each opencode test: a git project whose opencode.json the user already has (their
// model: the scripted server), `pulse start` on it and `pulse setup opencode --write` done as the
// README says; then `opencode run`, or `opencode serve` as the TUI runs it, on a script.

type Started = ReturnType<typeof trackStarted>;

/**
 * A fresh git repository with the user's own opencode.json (`extra` merged in), a real `pulse
 * start` on it, and `pulse setup opencode --write`; `prepare` runs on the folder before the daemon starts.
 */
export const setUpProject = async (
  started: Started,
  prefix: string,
  {
    prepare,
    extra = {},
    daemonEnv,
  }: {
    prepare?: (project: string) => Promise<unknown>;
    extra?: Record<string, unknown>;
    daemonEnv?: Record<string, string>;
  } = {},
): Promise<PulseProject> => {
  const scene = await pulseProjectFor(started, 'opencode', {
    prefix,
    ...(daemonEnv === undefined ? {} : { daemonEnv }),
    prepare: async (project) => {
      await writeFile(
        join(project, 'opencode.json'),
        `${JSON.stringify(opencodeConfig('http://127.0.0.1:9/v1', extra), null, 2)}\n`,
      );
      await prepare?.(project);
    },
  });
  // opencode npm-installs @opencode-ai/plugin into every plugin folder (pulse's plugin needs none of it): offline, seed it.
  await seedPluginDependencies(join(scene.project, '.opencode'));
  return scene;
};

/** Points the user's model entry in opencode.json at a scripted server, changing nothing else. */
const useModel = async (project: string, baseUrl: string) => {
  const file = join(project, 'opencode.json');
  const config = JSON.parse(await readFile(file, 'utf8'));
  config.provider.scripted.options.baseURL = baseUrl;
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
};

/** A model scripted for one test, closed with the test; its requests point opencode at it. */
const scriptedModel = async (started: Started, project: string, steps: Step[]) => {
  const model = await startScriptedChatModel(steps);
  started.streams.push({ close: () => void model.close() });
  await useModel(project, model.baseUrl);
  const home = await makeOpencodeHome();
  started.projects.push(home.home);
  return { model, home };
};

/** One `opencode run` on a script: what it printed, what the model was sent, and enough to tell why an assertion failed. */
export interface ScriptedRun {
  run: OpencodeRun;
  model: ScriptedChatModel;
  home: OpencodeHome;
  context: string;
}

/** `opencode run --format json <prompt>` in the project, offline, the model answering from `steps`, with `env` added. */
export const runScripted = async (
  started: Started,
  project: string,
  steps: Step[],
  prompt: string,
  env: Record<string, string> = {},
): Promise<ScriptedRun> => {
  const { model, home } = await scriptedModel(started, project, steps);
  Object.assign(home.env, env);
  const run = await runOpencode({ cwd: project, home, prompt });
  const context = `opencode run exited ${run.code} after ${model.turns().length} model turns\n${run.stderr.slice(-3000)}`;
  return { run, model, home, context };
};

/** One bus event as `GET /event` streams it. */
export interface BusEvent {
  type: string;
  properties: Record<string, unknown>;
}

/** `opencode serve`, the server the TUI runs: its URL, the events it has streamed so far, and how to ask it. */
export interface OpencodeServer {
  url: string;
  model: ScriptedChatModel;
  events: BusEvent[];
  /** Resolves with the first event (so far or to come) that `match` accepts. */
  event(match: (event: BusEvent) => boolean, what: string): Promise<BusEvent>;
  /** Everything the server printed. */
  output(): string;
  /** Sends the user's prompt in a new session and resolves when its first turn is done; the session's id. */
  prompt(text: string): Promise<string>;
}

/** Reads the server's event stream into `events`, waking `waiters` at each event. */
const streamEvents = async (url: string, events: BusEvent[], wake: () => void, signal: AbortSignal) => {
  const response = await fetch(new URL('/event', url), { signal });
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const data = buffer
        .slice(0, end)
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('');
      buffer = buffer.slice(end + 2);
      if (data !== '') events.push(JSON.parse(data) as BusEvent);
      wake();
    }
  }
};

/**
 * `opencode serve` in the project, offline as `opencode run` is, the model answering from `steps`;
 * stopped with the test. The TUI runs this same server (in a worker), so a stop held here is one
 * held in the TUI.
 */
export const serveScripted = async (
  started: Started,
  project: string,
  steps: Step[],
): Promise<OpencodeServer> => {
  const { model, home } = await scriptedModel(started, project, steps);
  const child = spawn(OPENCODE_BIN, ['serve', '--port', '0'], {
    cwd: project,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: opencodeEnv(home),
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`opencode serve exited with ${code}:\n${output}`)));
  });
  const stop = new AbortController();
  started.streams.push({
    close: () => {
      stop.abort();
      killGroup(child.pid);
    },
  });
  const events: BusEvent[] = [];
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  void streamEvents(url, events, wake, stop.signal).catch(() => {});
  const event = async (match: (event: BusEvent) => boolean, what: string) => {
    for (;;) {
      const found = events.find(match);
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`opencode serve exited before ${what}:\n${output}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const post = async (path: string, body: unknown) => {
    const response = await fetch(new URL(path, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  return {
    url,
    model,
    events,
    event,
    output: () => output,
    prompt: async (text) => {
      const session = String((await post('/session', {})).id);
      await post(`/session/${session}/message`, { parts: [{ type: 'text', text }] });
      return session;
    },
  };
};
