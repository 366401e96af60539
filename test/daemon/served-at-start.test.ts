import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectId } from '../../src/store/project-id.js';
import { freePort } from '../agents/pulse-project.js';
import {
  CLI,
  callTool,
  connectClient,
  oneShot,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { calendarSource } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';

/*
 * Issue 33, item 5: the port opens before the first project is served (`.pulse/` loaded, the
 * sources read: a sources.json makes that longer), and a project added to a running daemon has
 * URLs before it is open. A client that comes in that window waits for the project, and never
 * hears "This pulse serves no project now". Every request below is checked to have been sent
 * before the daemon logged the project as started, so none can pass by coming late.
 */

const started = trackStarted();
afterEach(() => started.cleanUp());

/** A project whose trusted sources.json runs a fixture server, which makes its start longer. */
const projectWithSources = async () => {
  const project = await tempProject('pulse-served-');
  started.projects.push(project);
  await calendarSource(project, ['standup']);
  return project;
};

/** `pulse start` on `port` as a child process, not waited for; the port is open once `opened` resolves. */
const spawnStart = (project: string, port: number) => {
  const child = spawn(process.execPath, [CLI, 'start', '-p', project, '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.children.push(child);
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (data) => (output += data));
  return { child, opened: portOpens(port, () => (child.exitCode === null ? null : output)) };
};

/** Tries to connect to the port in a tight loop and resolves the moment it accepts; throws once `ended` says why. */
const portOpens = async (port: number, ended: () => string | null): Promise<void> => {
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    const output = ended();
    if (output !== null) throw new Error(`pulse start ended before its port opened:\n${output}`);
  }
};

/** When the project's daemon logged it as started, the last step before it is served (waited for: the log may be behind). */
const startedAt = (project: string): Promise<number> =>
  waitUntil(
    async () => {
      const log = await readFile(join(project, '.pulse', 'pulse.log'), 'utf8').catch(() => '');
      const line = log.split('\n').find((l) => l.includes('"msg":"pulse started"'));
      return line === undefined ? undefined : Date.parse((JSON.parse(line) as { time: string }).time);
    },
    { describe: () => `"pulse started" in ${project}/.pulse/pulse.log` },
  );

const SHOULD_INTERRUPT = { name: 'pulse_should_interrupt', arguments: {} };

describe('a request that reaches the port before its project is served', () => {
  it('waits for the project: a one-shot POST, a session client, /healthz and a hook sent the moment the port opens get real answers', async () => {
    const project = await projectWithSources();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;

    await spawnStart(project, port).opened;
    const sentAt = Date.now();
    const [call, session, health, hook] = await Promise.all([
      oneShot(`${origin}/mcp`, 'tools/call', SHOULD_INTERRUPT),
      (async () => {
        const client = await connectClient(`${origin}/p/${projectId(project)}/mcp`);
        started.clients.push(client);
        return callTool(client, 'pulse_should_interrupt');
      })(),
      fetch(`${origin}/healthz`),
      fetch(`${origin}/hook/claude/PreToolUse?project=${encodeURIComponent(project)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          hook_event_name: 'PreToolUse',
          session_id: 'served-at-start',
          cwd: project,
          tool_name: 'Bash',
          tool_input: { command: 'ls' },
        }),
      }),
    ]);

    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body.result?.structuredContent).toMatchObject({ needs_replan: false });
    expect(session).toMatchObject({ needs_replan: false });
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, project_id: projectId(project) });
    expect(hook.status).toBe(200);
    expect(await hook.text()).not.toMatch(/serves no project|not enforcing/);
    expect(sentAt, 'the requests were sent before the project was served').toBeLessThan(
      await startedAt(project),
    );
  });

  it('lists the projects at once for a pulse start beside it, and adds that project once the first is served', async () => {
    const project = await projectWithSources();
    const other = await tempProject('pulse-served-other-');
    started.projects.push(other);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;

    await spawnStart(project, port).opened;
    const sentAt = Date.now();
    // What `pulse start -p <other>` sends once it finds the port taken: the probe, then the add.
    const [probe, add] = await Promise.all([
      fetch(`${origin}/projects`).then(async (r) => ({ status: r.status, body: await r.json() })),
      fetch(`${origin}/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-pulse-cli': '1' },
        body: JSON.stringify({ project: other }),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { url?: string; error?: string },
      })),
    ]);

    // Not held: a probe that waited past its 2 s would take the daemon for another program.
    expect(probe).toEqual({
      status: 200,
      body: expect.objectContaining({ name: 'pulse-agent', projects: [] }),
    });
    expect(add.status, add.body.error).toBe(201);
    expect(add.body.url).toBe(`${origin}/p/${projectId(other)}/mcp`);
    const call = await oneShot(add.body.url!, 'tools/call', SHOULD_INTERRUPT);
    expect(call.status).toBe(200);
    expect(sentAt, 'the requests were sent before the project was served').toBeLessThan(
      await startedAt(project),
    );
  });

  it('waits for a project being added to a serving daemon: its own URL answers, not 404', async () => {
    const first = await tempProject('pulse-served-first-');
    started.projects.push(first);
    const daemon = await startDaemon(first);
    started.daemons.push(daemon);
    const project = await projectWithSources();
    const url = `http://127.0.0.1:${daemon.port}/p/${projectId(project)}/mcp`;

    const joining = runCli(['start', '-p', project, '--port', String(daemon.port)]);
    // The daemon takes the project's lock once it has begun to open it.
    while (!existsSync(join(project, '.pulse', 'daemon.lock'))) await new Promise(setImmediate);
    const sentAt = Date.now();
    const call = await oneShot(url, 'tools/call', SHOULD_INTERRUPT);

    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body.result?.structuredContent).toMatchObject({ needs_replan: false });
    expect(sentAt, 'the call was sent before the project was served').toBeLessThan(await startedAt(project));
    const { code, stdout } = await joining;
    expect(code).toBe(0);
    expect(stdout).toContain('Added');
  });
});
