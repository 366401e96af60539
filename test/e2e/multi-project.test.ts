import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { Discovery } from '../../src/store/daemon-record.js';
import {
  CLI,
  callTool,
  connectClient,
  oneShot,
  type RunningDaemon,
  removeProject,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { daemonRecord, recordedDaemon } from '../support/daemon-record.js';
import { isRunning, runNode } from '../support/processes.js';

const daemons: RunningDaemon[] = [];
const projects: string[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(daemons.splice(0).map((d) => d.kill9()));
  await Promise.all(projects.splice(0).map(removeProject));
});

const project = async () => {
  const dir = await tempProject('pulse-multi-');
  projects.push(dir);
  return dir;
};

const discoveryOf = async (dir: string): Promise<Discovery> => recordedDaemon(dir);

/** `pulse start -p DIR --port PORT`, which must add DIR to the daemon there and exit 0; its discovery file. */
const join_ = async (dir: string, port: number, args: string[] = []): Promise<Discovery> => {
  const started = await runCli(['start', '-p', dir, '--port', String(port), ...args]);
  expect(started.code, started.stderr).toBe(0);
  expect(started.stdout).toMatch(
    new RegExp(`^Added ${dir} to the pulse already running on port ${port}`, 'm'),
  );
  return discoveryOf(dir);
};

const needsReplan = async (url: string): Promise<boolean> => {
  const client = await connectClient(url);
  clients.push(client);
  return (await callTool<{ needs_replan: boolean }>(client, 'pulse_should_interrupt', {})).needs_replan;
};

/** A Claude Code PreToolUse hook for an edit in `dir`, posted as its HTTP hook does. */
const preToolUse = async (port: number, dir: string, query: string | null = dir) => {
  const response = await fetch(
    `http://127.0.0.1:${port}/hook/claude/PreToolUse${query === null ? '' : `?project=${encodeURIComponent(query)}`}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        session_id: `s-${dir}`,
        cwd: dir,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: join(dir, 'src.ts'), content: 'x' },
      }),
    },
  );
  expect(response.status).toBe(200);
  const answer = (await response.json()) as {
    hookSpecificOutput?: { permissionDecision?: string };
    systemMessage?: string;
  };
  return answer;
};

const decision = async (port: number, dir: string, query: string | null = dir) =>
  (await preToolUse(port, dir, query)).hookSpecificOutput?.permissionDecision ?? 'allow';

const editGuidance = (dir: string, line: string) =>
  appendFile(join(dir, '.pulse', 'guidance.md'), `\n${line}\n`);

describe('one daemon for several projects', () => {
  it('adds a second project to the daemon on the port, holds only the edited project’s agents, and ends with the last stop', async () => {
    const [a, b] = [await project(), await project()];
    const daemon = await startDaemon(a);
    daemons.push(daemon);
    const first = await discoveryOf(a);
    const second = await join_(b, daemon.port);
    // One process serves both, each under its own URL.
    expect(second.pid).toBe(daemon.process.pid);
    expect(second.url).not.toBe(first.url);
    expect(daemon.url).toBe(first.url);

    await editGuidance(a, 'Use tabs.');
    expect(await needsReplan(first.url)).toBe(true);
    expect(await needsReplan(second.url)).toBe(false);
    expect(await decision(daemon.port, a)).toBe('deny');
    expect(await decision(daemon.port, b)).toBe('allow');
    // Without ?project=, the hook input's cwd names the project.
    expect(await decision(daemon.port, a, null)).toBe('deny');

    // /mcp names no project when there are two: a JSON-RPC error listing both URLs.
    const legacy = await oneShot(`http://127.0.0.1:${daemon.port}/mcp`, 'tools/list');
    expect(legacy.status).toBe(409);
    expect(legacy.body.error?.message).toContain(first.url);
    expect(legacy.body.error?.message).toContain(second.url);

    const listed = await runNode(CLI, ['status'], { cwd: a });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(a);
    expect(listed.stdout).toContain(b);
    // Who still owes an ack, under its project: only a's agent, held by a's change.
    const owingLines = listed.stdout.split('\n').filter((line) => / owes evt_/.test(line));
    expect(owingLines).toEqual([
      expect.stringMatching(
        /^ {4}pulse-test 1\.0\.0 \(session [0-9a-f]{8}…(, .*hook session .*)?\) owes evt_\S+$/,
      ),
    ]);
    expect(listed.stdout.indexOf(owingLines[0]!)).toBeGreaterThan(listed.stdout.indexOf(a));
    expect(listed.stdout.indexOf(owingLines[0]!)).toBeLessThan(listed.stdout.indexOf(b));
    // The list of projects at / says the same.
    const projectsPage = await (await fetch(`http://127.0.0.1:${daemon.port}/`)).text();
    expect(
      projectsPage.match(/pulse-test 1\.0\.0 \(session [0-9a-f]{8}…[^)]*\) owes <code>evt_/g),
    ).toHaveLength(1);
    expect(projectsPage.match(/No agent owes an acknowledgement\./g)).toHaveLength(1);

    const stopA = await runCli(['stop', '-p', a]);
    expect(stopA.stdout).toContain(
      `Stopped serving ${a}; pulse (pid ${daemon.process.pid}) goes on serving 1 other project.`,
    );
    expect(daemonRecord(a)).toBeNull();
    expect(await needsReplan(second.url)).toBe(false);
    const gone = await oneShot(first.url, 'tools/list');
    expect(gone.status).toBe(404);
    expect(gone.body.error?.message).toContain(second.url);
    // With one project left, /mcp serves it again, as a daemon of one project always did.
    expect((await oneShot(`http://127.0.0.1:${daemon.port}/mcp`, 'tools/list')).status).toBe(200);
    // A hook of the project no longer served fails open, saying so.
    const unserved = await preToolUse(daemon.port, a);
    expect(unserved.hookSpecificOutput).toBeUndefined();
    expect(unserved.systemMessage).toContain(`not ${a}`);

    const stopB = await runCli(['stop', '-p', b]);
    expect(stopB.stdout).toContain(`Stopped pulse (pid ${daemon.process.pid}) for ${b}.`);
    expect(await daemon.stop()).toBe(0);
    expect(isRunning(daemon.process.pid!)).toBe(false);
  });

  it('serves three projects from one process, each edit holding its own project’s agents only', async () => {
    const dirs = [await project(), await project(), await project()];
    const daemon = await startDaemon(dirs[0]!);
    daemons.push(daemon);
    const found = [
      await discoveryOf(dirs[0]!),
      await join_(dirs[1]!, daemon.port),
      await join_(dirs[2]!, daemon.port, ['--detach']),
    ];
    expect(new Set(found.map((d) => d.pid))).toEqual(new Set([daemon.process.pid]));
    for (const [edited, dir] of dirs.entries()) {
      await editGuidance(dir, `Rule ${edited}.`);
      for (const [i, other] of dirs.entries()) {
        expect(await needsReplan(found[i]!.url)).toBe(i <= edited);
        expect(await decision(daemon.port, other)).toBe(i <= edited ? 'deny' : 'allow');
      }
    }
    const status = (await (await fetch(`http://127.0.0.1:${daemon.port}/projects`)).json()) as {
      projects: Array<{ root: string; replan: unknown }>;
    };
    expect(status.projects.map((p) => p.root)).toEqual(dirs);
  });

  it('refuses to add a project another daemon holds, and keeps serving its own', async () => {
    const [a, b] = [await project(), await project()];
    const daemonA = await startDaemon(a);
    const daemonB = await startDaemon(b);
    daemons.push(daemonA, daemonB);
    const refused = await runCli(['start', '-p', b, '--port', String(daemonA.port)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('pulse is already running for this project');
    expect(refused.stderr).toContain(`pid ${daemonB.process.pid}`);
    expect(await needsReplan(daemonA.url)).toBe(false);
    expect((await discoveryOf(b)).pid).toBe(daemonB.process.pid);
    const list = (await (await fetch(`http://127.0.0.1:${daemonA.port}/projects`)).json()) as {
      projects: unknown[];
    };
    expect(list.projects).toHaveLength(1);
  });

  it('adds projects for the pulse CLI only: a browser page, or a request without its header, is refused', async () => {
    const [a, b] = [await project(), await project()];
    const daemon = await startDaemon(a);
    daemons.push(daemon);
    const body = JSON.stringify({ project: b });
    const post = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${daemon.port}/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    expect((await post({ origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ origin: `http://127.0.0.1:${daemon.port}`, 'x-pulse-cli': '1' })).status).toBe(403);
    expect((await post({})).status).toBe(403);
    expect(daemonRecord(b)).toBeNull();
    expect((await post({ 'x-pulse-cli': '1' })).status).toBe(201);
    await waitUntil(async () => (await discoveryOf(b).catch(() => null))?.pid === daemon.process.pid, {
      describe: () => 'b served',
    });
  });

  it('shuts every project down on SIGTERM, and after kill -9 each project starts again', async () => {
    const [a, b] = [await project(), await project()];
    const daemon = await startDaemon(a);
    daemons.push(daemon);
    await join_(b, daemon.port);
    await daemon.kill9();
    const again = await startDaemon(a, { args: [] });
    daemons.push(again);
    const rejoined = await join_(b, again.port);
    expect(rejoined.pid).toBe(again.process.pid);
    expect(await again.stop()).toBe(0);
    for (const dir of [a, b]) {
      expect(daemonRecord(dir)).toBeNull();
      await expect(readFile(join(dir, '.pulse', 'daemon.lock'))).rejects.toThrow();
    }
  });
});
