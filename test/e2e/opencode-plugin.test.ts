import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, runCli, startDaemon, tempProject } from '../support/daemon.js';
import { save } from '../support/files.js';
import { trackStarted } from '../support/started.js';

/*
 * pulse's opencode plugin as `pulse setup opencode --write` writes it, loaded as opencode loads it
 * (its one export called with opencode's context) and its hooks called with the arguments
 * opencode 1.18.33 passes (test/fixtures/hooks/opencode-1.18.33/), against a real `pulse start`.
 * Only opencode's client is a stand-in, recording what the plugin asks of it. The real opencode
 * runs it in test/agents/opencode.test.ts.
 */

const started = trackStarted();

afterEach(started.cleanUp);

type Hook = (input: Record<string, unknown>, output: Record<string, unknown>) => Promise<void>;
type Hooks = Record<string, Hook> & { event: (arg: { event: unknown }) => Promise<void> };

/** opencode's client, as far as the plugin uses it: what it was asked to show, log and send. */
const fakeClient = () => {
  const asked = { toasts: [] as unknown[], logs: [] as unknown[], prompts: [] as unknown[] };
  const record = (list: unknown[]) => async (options: unknown) => {
    list.push(options);
    return {};
  };
  return {
    asked,
    client: {
      tui: { showToast: record(asked.toasts) },
      app: { log: record(asked.logs) },
      session: { prompt: record(asked.prompts) },
    },
  };
};

/** A project with `pulse start` on it and `pulse setup opencode --write` done; the plugin it wrote, loaded. */
const setUp = async (env: Record<string, string> = {}) => {
  const project = await tempProject('pulse-opencode-plugin-');
  started.projects.push(project);
  const daemon = await startDaemon(project, { env });
  started.daemons.push(daemon);
  const setup = await runCli(['setup', 'opencode', '--write', '-p', project, '--port', String(daemon.port)]);
  expect(setup.code, setup.stdout + setup.stderr).toBe(0);
  // As written, under a name Node loads as an ES module (opencode's Bun needs none).
  const module = join(project, 'pulse-plugin.mjs');
  await copyFile(join(project, '.opencode', 'plugins', 'pulse.js'), module);
  const exports = (await import(pathToFileURL(module).href)) as Record<string, unknown>;
  expect(Object.keys(exports), 'opencode loads every export as a plugin').toEqual(['PulsePlugin']);
  const { asked, client } = fakeClient();
  const plugin = exports.PulsePlugin as (context: object) => Promise<Hooks>;
  const hooks = await plugin({ client, directory: project, worktree: project });
  return { project, daemon, hooks, asked };
};

const SESSION = 'ses_1';

const beforeTool = (hooks: Hooks, tool: string, args: Record<string, unknown>, session = SESSION) =>
  hooks['tool.execute.before']!({ tool, sessionID: session, callID: 'call_1' }, { args });

const editGuidance = (project: string) =>
  save(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API.\n');

const idle = (hooks: Hooks, session = SESSION) =>
  hooks.event({ event: { id: 'evt_bus', type: 'session.idle', properties: { sessionID: session } } });

describe("pulse's opencode plugin, as setup writes it", () => {
  it("throws pulse's reason for a tool call while a replan is pending, and lets reads and the plan edit through", async () => {
    const { project, hooks } = await setUp();
    await expect(
      beforeTool(hooks, 'bash', { command: 'touch made' }),
      'nothing pending',
    ).resolves.toBeUndefined();

    await editGuidance(project);
    await expect(beforeTool(hooks, 'bash', { command: 'touch made' })).rejects.toThrow(
      /^pulse: a replan is pending \(event evt_\w+; the user changed \.pulse\/guidance\.md\)\. pulse held this shell command .* and agent "opencode:ses_1"/,
    );
    await expect(
      beforeTool(hooks, 'read', { filePath: join(project, '.pulse', 'guidance.md') }),
    ).resolves.toBeUndefined();
    await expect(beforeTool(hooks, 'bash', { command: 'cat .pulse/guidance.md' })).resolves.toBeUndefined();
    await expect(
      beforeTool(hooks, 'edit', {
        filePath: join(project, '.pulse', 'plan.md'),
        oldString: 'a',
        newString: 'b',
      }),
    ).resolves.toBeUndefined();
    await expect(
      beforeTool(hooks, 'write', { filePath: join(project, 'notes.md'), content: 'x' }),
    ).rejects.toThrow(/pulse held the tool write/);
  });

  it("tells a session of the pending replan once, as a part of the user's message after the prompt", async () => {
    const { project, hooks } = await setUp();
    await editGuidance(project);
    const message = () => ({
      message: { id: 'msg_1', sessionID: SESSION, role: 'user' },
      parts: [
        { id: 'prt_0a1b2c3d4e5f', type: 'text', text: 'Do the task', messageID: 'msg_1', sessionID: SESSION },
      ],
    });
    const first = message();
    await hooks['chat.message']!({ sessionID: SESSION }, first);
    expect(first.parts).toEqual([
      message().parts[0],
      {
        id: 'prt_0a1b2c3d4e5f0',
        sessionID: SESSION,
        messageID: 'msg_1',
        type: 'text',
        text: expect.stringMatching(/^pulse: a replan is pending .* Before any other work: /),
        synthetic: true,
      },
    ]);
    expect([first.parts[0]!.id, first.parts[1]!.id].sort(), 'the context sorts after the prompt').toEqual([
      'prt_0a1b2c3d4e5f',
      'prt_0a1b2c3d4e5f0',
    ]);
    const second = message();
    await hooks['chat.message']!({ sessionID: SESSION }, second);
    expect(second.parts, 'told once').toEqual(message().parts);
  });

  it("ties its session to the MCP session pulse's own answer names: that session's ack frees its calls", async () => {
    const { project, daemon, hooks } = await setUp();
    await editGuidance(project);
    // Two of opencode's sessions are held before any MCP client comes: neither is tied by elimination.
    for (const session of [SESSION, 'ses_2'])
      await expect(beforeTool(hooks, 'bash', { command: 'touch made' }, session)).rejects.toThrow(
        `and agent "opencode:${session}"`,
      );
    const client = await connectClient(daemon.url);
    started.clients.push(client);
    // opencode runs the MCP call, then passes its result to tool.execute.after, as the fixture shows.
    const result = await client.callTool({ name: 'pulse_should_interrupt', arguments: {} });
    const eventId = (result.structuredContent as { pending_replan_event_id: string }).pending_replan_event_id;
    await hooks['tool.execute.after']!(
      { tool: 'pulse_pulse_should_interrupt', sessionID: SESSION, callID: 'call_2', args: {} },
      { content: result.content, structuredContent: result.structuredContent },
    );
    await save(join(project, '.pulse', 'plan.md'), '# Plan\n\nUse the new API.\n');
    const acked = await callTool<{ accepted: boolean }>(client, 'pulse_ack_replan', { event_id: eventId });
    expect(acked.accepted).toBe(true);
    await expect(
      beforeTool(hooks, 'bash', { command: 'touch made' }),
      'tied: acknowledged',
    ).resolves.toBeUndefined();
    // The other session still owes its own ack.
    await expect(beforeTool(hooks, 'bash', { command: 'touch made' }, 'ses_2')).rejects.toThrow(
      'and agent "opencode:ses_2"',
    );
  });

  it('holds a stop once per pending event by sending the reason as the next prompt, then tells the user it is still pending', async () => {
    const { project, hooks, asked } = await setUp();
    await editGuidance(project);
    await idle(hooks);
    expect(asked.prompts).toEqual([
      {
        path: { id: SESSION },
        body: {
          parts: [
            { type: 'text', text: expect.stringMatching(/^pulse: a replan is pending .* Do not stop yet/) },
          ],
        },
      },
    ]);
    // The prompt comes back through chat.message: it tells nothing more.
    const parts = [{ id: 'prt_1', type: 'text', text: 'pulse: …' }];
    await hooks['chat.message']!({ sessionID: SESSION }, { message: { id: 'msg_2' }, parts });
    expect(parts).toHaveLength(1);

    await idle(hooks);
    expect(asked.prompts, 'the same event holds no second stop').toHaveLength(1);
    expect(asked.toasts).toEqual([
      {
        body: {
          title: 'pulse',
          message: expect.stringMatching(
            /^pulse: replan evt_\w+ is still pending: the agent stopped without/,
          ),
          variant: 'warning',
        },
      },
    ]);
  });

  it("leaves alone the end of a subagent's session and a turn the user interrupted", async () => {
    const { project, hooks, asked } = await setUp();
    await editGuidance(project);
    await hooks.event({
      event: {
        type: 'session.created',
        properties: { sessionID: 'ses_child', info: { id: 'ses_child', parentID: SESSION } },
      },
    });
    await idle(hooks, 'ses_child');
    await hooks.event({
      event: {
        type: 'message.updated',
        properties: {
          sessionID: SESSION,
          info: { role: 'assistant', sessionID: SESSION, error: { name: 'MessageAbortedError' } },
        },
      },
    });
    await idle(hooks);
    expect(asked.prompts).toEqual([]);
    // The user's next prompt starts a turn that ends normally: its stop is held.
    await hooks.event({
      event: {
        type: 'message.updated',
        properties: { sessionID: SESSION, info: { role: 'assistant', sessionID: SESSION } },
      },
    });
    await idle(hooks);
    expect(asked.prompts).toHaveLength(1);
  });

  it('lets every call through when the daemon is down, and tells the user once in a toast and the log', async () => {
    const { project, daemon, hooks, asked } = await setUp();
    await editGuidance(project);
    await daemon.stop();
    await expect(beforeTool(hooks, 'bash', { command: 'touch made' })).resolves.toBeUndefined();
    await hooks['tool.execute.after']!(
      { tool: 'bash', sessionID: SESSION, callID: 'c', args: {} },
      { output: '' },
    );
    await idle(hooks);
    const line = `pulse: the daemon is not running at 127.0.0.1:${daemon.port} for ${project}; not enforcing replans. Start it with: pulse start -p ${project} --port ${daemon.port}`;
    expect(asked.toasts).toEqual([{ body: { title: 'pulse', message: line, variant: 'warning' } }]);
    expect(asked.logs).toEqual([{ body: { service: 'pulse', level: 'warn', message: line } }]);
    expect(asked.prompts).toEqual([]);
  });

  it('sends PULSE_TOKEN to a daemon that requires one, and says so when it is not set', async () => {
    const token = 'a-token-of-at-least-16-characters';
    const { project, daemon, hooks, asked } = await setUp({ PULSE_TOKEN: token });
    await editGuidance(project);
    const saved = process.env.PULSE_TOKEN;
    try {
      delete process.env.PULSE_TOKEN;
      await expect(beforeTool(hooks, 'bash', { command: 'touch made' })).resolves.toBeUndefined();
      expect(asked.toasts).toEqual([
        {
          body: {
            title: 'pulse',
            message: expect.stringContaining(
              `pulse: the daemon refused the hook (is PULSE_TOKEN set?) at 127.0.0.1:${daemon.port}`,
            ),
            variant: 'warning',
          },
        },
      ]);
      process.env.PULSE_TOKEN = token;
      await expect(beforeTool(hooks, 'bash', { command: 'touch made' })).rejects.toThrow(
        /^pulse: a replan is pending/,
      );
    } finally {
      if (saved === undefined) delete process.env.PULSE_TOKEN;
      else process.env.PULSE_TOKEN = saved;
    }
  });
});
