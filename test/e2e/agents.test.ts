import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, type RunningDaemon, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { save } from '../support/files.js';
import { REASONS } from '../support/protocol.js';
import { trackStarted } from '../support/started.js';

/*
 * Several agents in one project, as people run them: each a Claude Code session with its own MCP
 * session (an SDK client) and its own hook session, the hooks posted to the daemon exactly as
 * Claude Code's HTTP hooks post them (PreToolUse, the MCP call, PostToolUse with pulse's answer).
 * Each agent must replan and acknowledge a guidance change itself.
 */

const started = trackStarted();
afterEach(started.cleanUp);

type Json = Record<string, unknown>;

interface Answer {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
  pending_replan_files: string[];
  reason: string;
  agent_id: string;
  accepted?: boolean;
  code?: string;
}

/** One Claude Code session working in the project: its MCP client and its hook session. */
const claudeAgent = async (daemon: RunningDaemon, session: string) => {
  const client: Client = await connectClient(daemon.url);
  started.clients.push(client);
  const hook = async (event: string, body: Json): Promise<Json> => {
    const url = `http://127.0.0.1:${daemon.port}/hook/claude/${event}?project=${encodeURIComponent(daemon.project)}`;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        session_id: session,
        transcript_path: join(daemon.project, `${session}.jsonl`),
        cwd: daemon.project,
        permission_mode: 'default',
        hook_event_name: event,
        ...body,
      }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Json;
  };
  /** The reason a tool call is denied, or null when it runs. */
  const tryTool = async (tool_name: string, tool_input: Json): Promise<string | null> => {
    const out = await hook('PreToolUse', { tool_name, tool_input, tool_use_id: `toolu_${session}` });
    const specific = out.hookSpecificOutput as Json | undefined;
    return specific?.permissionDecision === 'deny' ? (specific.permissionDecisionReason as string) : null;
  };
  /** A pulse tool as Claude Code calls it: PreToolUse, the MCP call, PostToolUse with the answer's text. */
  const pulse = async (name: string, args: Json = {}): Promise<Answer> => {
    const tool_name = `mcp__pulse__${name}`;
    expect(await tryTool(tool_name, args), `${name} is never held`).toBeNull();
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    await hook('PostToolUse', { tool_name, tool_input: args, tool_response: text, tool_use_id: 'toolu_x' });
    return JSON.parse(text) as Answer;
  };
  return {
    client,
    session,
    touch: (file: string) => tryTool('Bash', { command: `touch ${file}`, description: 'touch' }),
    pulse,
    /** Replans: reads the change, edits the plan, acknowledges the event it is told of. */
    async replan(plan: string): Promise<Answer> {
      const { pending_replan_event_id } = await pulse('pulse_should_interrupt');
      expect(await tryTool('Read', { file_path: join(daemon.project, '.pulse', 'guidance.md') })).toBeNull();
      await save(join(daemon.project, '.pulse', 'plan.md'), `# Plan\n\n${plan}\n`);
      return pulse('pulse_ack_replan', { event_id: pending_replan_event_id });
    },
  };
};

const start = async (args: string[] = []) => {
  const project = await tempProject('pulse-agents-');
  started.projects.push(project);
  const daemon = await startDaemon(project, { args });
  started.daemons.push(daemon);
  return daemon;
};

const status = async (daemon: RunningDaemon): Promise<Json> =>
  (await fetch(`http://127.0.0.1:${daemon.port}/status`)).json() as Promise<Json>;

const changeGuidance = (daemon: RunningDaemon, text: string) =>
  save(join(daemon.project, '.pulse', 'guidance.md'), `# Guidance\n\n${text}\n`);

describe('each agent acknowledges a change itself', () => {
  it("leaves agent B held after agent A's ack, until B acknowledges itself", async () => {
    const daemon = await start();
    const a = await claudeAgent(daemon, 'session-a');
    const b = await claudeAgent(daemon, 'session-b');
    // Both are at work: each checked in and ran a tool.
    for (const agent of [a, b]) {
      expect((await agent.pulse('pulse_should_interrupt')).needs_replan).toBe(false);
      expect(await agent.touch(`${agent.session}-1`)).toBeNull();
    }

    await changeGuidance(daemon, 'Prefer a smaller patch.');
    // Held: for the replan, or (on a busy machine) while the change is still being read.
    expect(await a.touch('a2')).not.toBeNull();
    expect(await b.touch('b1')).not.toBeNull();

    const ackA = await a.replan('Smaller patch, for A.');
    expect(ackA.accepted).toBe(true);
    expect(await a.touch('a3'), 'A runs again').toBeNull();

    // B never read the change: it is still held, and told so, with the event to acknowledge.
    const heldB = await b.touch('b2');
    const event =
      ackA.pending_replan_event_id ??
      (ackA as unknown as { acknowledged_event_id: string }).acknowledged_event_id;
    expect(heldB).toContain(event);
    expect(heldB).toContain('and agent "claude:session-b"');
    const askB = await b.pulse('pulse_should_interrupt');
    expect(askB).toMatchObject({
      needs_replan: true,
      pending_replan_event_id: event,
      pending_replan_files: ['.pulse/guidance.md'],
      reason: REASONS.pending,
    });
    const seen = await status(daemon);
    expect((seen.replan as Json).state).toBe('pending');
    const owing = (
      (seen.replan as Json).agents as Array<{ owes: string | null; hook_sessions: string[] }>
    ).filter((x) => x.owes);
    expect(owing.map((x) => x.hook_sessions)).toEqual([['claude:session-b']]);

    const ackB = await b.replan('Smaller patch, for B.');
    expect(ackB).toMatchObject({ accepted: true });
    expect(await b.touch('b3')).toBeNull();
    expect(((await status(daemon)).replan as Json).state).toBe('acknowledged');
    // PulseAgent's fields keep the latest accepted ack.
    const state = JSON.parse(await readFile(join(daemon.project, '.pulse', 'state.json'), 'utf8'));
    expect(state.last_acknowledged_event_id).toBe(event);
  });

  it('does not wait for an agent that left, and a second change holds the ones still working', async () => {
    // Hook sessions unheard for a second leave; the agent clock looks every second.
    const daemon = await start(['--session-idle', '1s']);
    const a = await claudeAgent(daemon, 'session-a');
    const b = await claudeAgent(daemon, 'session-b');
    for (const agent of [a, b]) await agent.pulse('pulse_should_interrupt');

    await changeGuidance(daemon, 'First change.');
    await b.client.close();
    // A keeps working (held, but heard); B's MCP session closed and its hook session goes quiet.
    await waitUntil(
      async () => {
        expect(await a.touch('a1')).not.toBeNull();
        const agents = ((await status(daemon)).replan as Json).agents as unknown[];
        return agents.length === 1;
      },
      { describe: () => 'only agent A left working', timeoutMs: 10_000 },
    );
    expect((await a.replan('After the first change.')).accepted).toBe(true);
    expect(((await status(daemon)).replan as Json).state).toBe('acknowledged');

    // A second change: A owes it again, and so does a newcomer while A has not acknowledged.
    await changeGuidance(daemon, 'Second change.');
    expect(await a.touch('a2')).not.toBeNull();
    const c = await claudeAgent(daemon, 'session-c');
    expect((await c.pulse('pulse_should_interrupt')).needs_replan).toBe(true);
    expect((await a.replan('After the second.')).accepted).toBe(true);
    expect(await a.touch('a3')).toBeNull();
    expect(await c.touch('c1')).not.toBeNull();
    expect((await c.replan('C follows too.')).accepted).toBe(true);
    expect(await c.touch('c2')).toBeNull();
  });

  it('frees no one and loses no owed ack across kill -9: both agents are still held after the restart', async () => {
    const first = await start();
    const a = await claudeAgent(first, 'session-a');
    const b = await claudeAgent(first, 'session-b');
    for (const agent of [a, b]) await agent.pulse('pulse_should_interrupt');
    await changeGuidance(first, 'Change before the crash.');
    const { pending_replan_event_id: event } = await a.pulse('pulse_should_interrupt');
    await first.kill9();

    const second = await startDaemon(first.project);
    started.daemons.push(second);
    // The agents reconnect (new MCP sessions); their hook sessions are the same.
    const a2 = await claudeAgent(second, 'session-a');
    const b2 = await claudeAgent(second, 'session-b');
    expect(await a2.touch('a1')).toContain(event!);
    expect(await b2.touch('b1')).toContain(event!);
    expect((await a2.replan('A after the restart.')).accepted).toBe(true);
    expect(await a2.touch('a2')).toBeNull();
    expect(await b2.touch('b2')).toContain(event!);
    expect((await b2.pulse('pulse_should_interrupt')).pending_replan_event_id).toBe(event);
    expect((await b2.replan('B after the restart.')).accepted).toBe(true);
    expect(await b2.touch('b3')).toBeNull();
  });

  it("keeps a lone agent's hook held across a restart though a newcomer acknowledges first", async () => {
    const first = await start();
    const a = await claudeAgent(first, 'session-a');
    await a.pulse('pulse_should_interrupt');
    await changeGuidance(first, 'Change before the restart.');
    const { pending_replan_event_id: event } = await a.pulse('pulse_should_interrupt');
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = await startDaemon(first.project);
    started.daemons.push(second);
    // A new agent comes first after the restart, owes the change as a newcomer, and acknowledges it.
    const b = await claudeAgent(second, 'session-b');
    expect((await b.replan('B, new after the restart.')).accepted).toBe(true);
    expect(await b.touch('b1')).toBeNull();
    // A never replanned: its hook session still holds its tool calls.
    const a2 = await claudeAgent(second, 'session-a');
    expect(await a2.touch('a1')).toContain(event!);
    expect((await a2.replan('A after the restart.')).accepted).toBe(true);
    expect(await a2.touch('a2')).toBeNull();
  });

  it('answers one agent exactly as PulseAgent does: the ack frees it, a second ack has nothing pending', async () => {
    const daemon = await start();
    const a = await claudeAgent(daemon, 'solo');
    await changeGuidance(daemon, 'Solo change.');
    // The hook session is tied to the MCP session by elimination before any pulse tool ran.
    expect(await a.touch('x')).not.toBeNull();
    const { pending_replan_event_id: event } = await a.client
      .callTool({ name: 'pulse_should_interrupt', arguments: {} })
      .then((r) => r.structuredContent as unknown as Answer);
    const ack = (await a.client.callTool({ name: 'pulse_ack_replan', arguments: { event_id: event } }))
      .structuredContent as Json;
    expect(ack).toMatchObject({ accepted: true, acknowledged_event_id: event });
    expect(await a.touch('y')).toBeNull();
    const again = (await a.client.callTool({ name: 'pulse_ack_replan', arguments: { event_id: event } }))
      .structuredContent as Json;
    expect(again).toMatchObject({ accepted: false, code: 'no_pending_replan' });
  });
});
