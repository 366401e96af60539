import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { pulseRunning } from '../support/cli-running.js';
import { callTool, connectClient, oneShot, runCli, startDaemon, tempProject } from '../support/daemon.js';
import { trackStarted } from '../support/started.js';

/*
 * Agents named as their users know them, on a spawned daemon through the built CLI: two SDK
 * clients that introduce themselves as Claude Code and Codex are named so by `pulse guide --wait`
 * and `pulse status`, each held by a guidance edit and freed by its own ack only; and one-shot
 * clients without sessions ack for themselves with the handle pulse minted them.
 */

const started = trackStarted();
afterAll(started.cleanUp);

const served = async () => {
  const project = await tempProject('pulse-names-');
  started.projects.push(project);
  const daemon = await startDaemon(project);
  started.daemons.push(daemon);
  return { project, daemon };
};

const sessionOf = (client: Client) => (client.transport as StreamableHTTPClientTransport).sessionId!;

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Decision {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
  agent_id: string;
  agent_handle: string | null;
}

describe('agents named by the clientInfo they sent', () => {
  it('names Claude Code and Codex in guide --wait and status, each freed only by its own ack', async () => {
    const { project, daemon } = await served();
    const claude = await connectClient(daemon.url, { name: 'claude-code', version: '2.1.332' });
    const codex = await connectClient(daemon.url, { name: 'codex-mcp-client', version: '0.171.0' });
    started.clients.push(claude, codex);
    for (const client of [claude, codex]) {
      const answer = await callTool<Decision>(client, 'pulse_should_interrupt');
      // A client with a session is known by it: no handle to carry.
      expect(answer.agent_handle).toBeNull();
    }
    const claudeName = `Claude Code 2.1.332 (session ${sessionOf(claude).slice(0, 8)}…)`;
    const codexName = `Codex 0.171.0 (session ${sessionOf(codex).slice(0, 8)}…)`;

    const guide = pulseRunning(started, [
      'guide',
      'Only the parser.',
      '-p',
      project,
      '--wait',
      '--timeout',
      '1m',
    ]);
    await guide.printed(/Waiting up to 1m/);
    const event = /logged as (evt_\S+)\./.exec(guide.output())![1]!;
    expect(guide.output()).toContain(`owes it: ${claudeName}`);
    expect(guide.output()).toContain(`owes it: ${codexName}`);
    expect(guide.output()).not.toContain('MCP session');

    const status = await runCli(['status', '-p', project]);
    expect(status.stdout).toContain(`owes ack:  ${claudeName} owes ${event}`);
    expect(status.stdout).toContain(`owes ack:  ${codexName} owes ${event}`);

    // Claude Code's ack frees Claude Code alone.
    expect(await callTool(claude, 'pulse_ack_replan', { event_id: event })).toMatchObject({ accepted: true });
    await guide.printed(new RegExp(`${escaped(claudeName)} acknowledged ${event}`));
    expect(await callTool<Decision>(claude, 'pulse_should_interrupt')).toMatchObject({ needs_replan: false });
    expect(await callTool<Decision>(codex, 'pulse_should_interrupt')).toMatchObject({
      needs_replan: true,
      pending_replan_event_id: event,
    });
    expect(guide.child.exitCode).toBeNull();

    expect(await callTool(codex, 'pulse_ack_replan', { event_id: event })).toMatchObject({ accepted: true });
    await guide.printed(new RegExp(`${escaped(codexName)} acknowledged ${event}`));
    expect(await guide.exited).toBe(0);

    const after = await runCli(['status', '-p', project]);
    expect(after.stdout).toMatch(new RegExp(`acked: +${escaped(codexName)} acknowledged ${event}`));
  }, 60_000);

  it('lets a one-shot client ack with the handle pulse minted, freeing only itself', async () => {
    const { project, daemon } = await served();
    const check = async (args: Record<string, unknown>) => {
      const { body } = await oneShot(daemon.url, 'tools/call', {
        name: 'pulse_should_interrupt',
        arguments: args,
      });
      return (body.result as unknown as { structuredContent: Decision }).structuredContent;
    };
    const ack = async (args: Record<string, unknown>) => {
      const { body } = await oneShot(daemon.url, 'tools/call', { name: 'pulse_ack_replan', arguments: args });
      return (body.result as { structuredContent: { accepted: boolean; agent_id: string } })
        .structuredContent;
    };
    const first = await check({});
    const second = await check({});
    expect(first.agent_handle).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(second.agent_handle).not.toBe(first.agent_handle);
    const a = first.agent_handle!;
    const b = second.agent_handle!;
    expect((await check({ handle: a })).agent_handle).toBe(a);
    await check({ handle: b });

    const guide = await runCli(['guide', 'Only the parser.', '-p', project]);
    const event = /logged as (evt_\S+)\./.exec(guide.stdout)![1]!;
    expect(await check({ handle: a })).toMatchObject({ needs_replan: true, pending_replan_event_id: event });

    const acked = await ack({ event_id: event, handle: a });
    expect(acked.accepted).toBe(true);
    expect(await check({ handle: a })).toMatchObject({ needs_replan: false });
    // B, known by its own handle, still owes the change.
    expect(await check({ handle: b })).toMatchObject({ needs_replan: true, pending_replan_event_id: event });
    const status = await runCli(['status', '-p', project]);
    expect(status.stdout).toMatch(
      new RegExp(`owes ack: .*handle ${escaped(b.slice(0, 8))}…\\) owes ${event}`),
    );
    expect(status.stdout).not.toMatch(new RegExp(`handle ${escaped(a.slice(0, 8))}…\\) owes`));
    // The calls before the handle came were PulseAgent's nameless client's: that one owes for itself.
    expect(status.stdout).toContain(`owes ack:  a one-shot caller owes ${event}`);
  }, 60_000);

  it('refuses a handle pulse could not have minted, as invalid params', async () => {
    const { daemon } = await served();
    const { body } = await oneShot(daemon.url, 'tools/call', {
      name: 'pulse_ack_replan',
      arguments: { event_id: 'evt_x', handle: 'session:../../other' },
    });
    const result = body.result as unknown as { isError?: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/handle/);
  }, 30_000);
});
