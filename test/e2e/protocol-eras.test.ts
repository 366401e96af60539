import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, type RunningDaemon, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { save } from '../support/files.js';
import { trackStarted } from '../support/started.js';

/*
 * Both MCP eras on one endpoint of a real daemon: clients of 2026-07-28 (the v2 SDK's Client pinned
 * to it: no initialize, no Mcp-Session-Id, clientInfo in each request's _meta) next to a 2025-11-25
 * session client (the v1 SDK). Each agent is held by a guidance change and freed by its own ack only.
 */

const started = trackStarted();
const modern: ModernClient[] = [];
afterEach(async () => {
  await Promise.allSettled(modern.splice(0).map((client) => client.close()));
  await started.cleanUp();
});

type Json = Record<string, unknown>;

const CLAUDE = { name: 'claude-code', version: '2.1.332' };

const serve = async (): Promise<RunningDaemon> => {
  const project = await tempProject('pulse-eras-');
  started.projects.push(project);
  const daemon = await startDaemon(project);
  started.daemons.push(daemon);
  return daemon;
};

/** A client speaking 2026-07-28 only: connect() fails against a server that cannot. */
const modernClient = async (url: string, info = CLAUDE): Promise<ModernClient> => {
  const client = new ModernClient(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  modern.push(client);
  return client;
};

const call = async (client: { callTool: ModernClient['callTool'] }, name: string, args: Json = {}) => {
  const result = (await client.callTool({ name, arguments: args })) as Json;
  return { result, answer: result.structuredContent as Json };
};

const editGuidance = (daemon: RunningDaemon, text: string) =>
  save(join(daemon.project, '.pulse', 'guidance.md'), `${text}\n`);

const statusOf = async (daemon: RunningDaemon): Promise<Json> =>
  (await (await fetch(new URL('/status', daemon.url))).json()) as Json;

/** Waits until the daemon logged a change of guidance.md, and returns its event id. */
const pendingEvent = async (client: ModernClient, handle: string): Promise<string> =>
  waitUntil(
    async () => {
      const { answer } = await call(client, 'pulse_should_interrupt', { handle });
      return (answer.pending_replan_event_id as string | null) ?? undefined;
    },
    { describe: () => 'the guidance change to be pending' },
  );

describe('MCP 2026-07-28 and 2025-11-25 clients on one endpoint', () => {
  it('holds a 2026 client and a 2025 session client for a guidance change, and frees each by its own ack only', async () => {
    const daemon = await serve();
    const claude = await modernClient(daemon.url);
    expect(claude.getProtocolEra()).toBe('modern');
    const legacy = await connectClient(daemon.url, { name: 'codex-mcp-client', version: '0.171.0' });
    started.clients.push(legacy);

    const first = (await call(claude, 'pulse_should_interrupt')).answer;
    const handle = first.agent_handle as string;
    expect(handle).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    await legacy.callTool({ name: 'pulse_should_interrupt', arguments: {} });

    await editGuidance(daemon, 'Use tabs.');
    const eventId = await pendingEvent(claude, handle);
    const legacyHeld = (await legacy.callTool({ name: 'pulse_should_interrupt', arguments: {} })) as Json;
    expect((legacyHeld.structuredContent as Json).needs_replan).toBe(true);

    const acked = (await call(claude, 'pulse_ack_replan', { event_id: eventId, handle })).answer;
    expect(acked.accepted).toBe(true);
    expect((await call(claude, 'pulse_should_interrupt', { handle })).answer.needs_replan).toBe(false);
    const stillHeld = (await legacy.callTool({ name: 'pulse_should_interrupt', arguments: {} })) as Json;
    expect((stillHeld.structuredContent as Json).needs_replan, 'the 2026 ack freed the 2025 agent').toBe(
      true,
    );

    await legacy.callTool({ name: 'pulse_ack_replan', arguments: { event_id: eventId } });
    const freed = (await legacy.callTool({ name: 'pulse_should_interrupt', arguments: {} })) as Json;
    expect((freed.structuredContent as Json).needs_replan).toBe(false);

    // The revision each agent speaks, in /status, pulse status's source, and the log.
    const agents = (((await statusOf(daemon)).replan as Json).agents as Json[]).map((a) => a.client as Json);
    expect(agents.map((c) => c.protocol).sort()).toEqual(['2025-11-25', '2026-07-28']);
    expect(daemon.output()).toMatch(
      /agent working: Claude Code 2\.1\.332 \(handle [^)]+\), speaking MCP 2026-07-28/,
    );
    expect(daemon.output()).toMatch(
      /agent working: Codex 0\.171\.0 \(session [^)]+\), speaking MCP 2025-11-25/,
    );
  });

  it('takes two 2026 clients with the same clientInfo for two agents: one ack never frees the other', async () => {
    const daemon = await serve();
    const a = await modernClient(daemon.url);
    const b = await modernClient(daemon.url);
    const handleA = (await call(a, 'pulse_should_interrupt')).answer.agent_handle as string;
    const handleB = (await call(b, 'pulse_should_interrupt')).answer.agent_handle as string;
    expect(handleA).not.toBe(handleB);

    await editGuidance(daemon, 'Write tests first.');
    const eventId = await pendingEvent(a, handleA);
    expect((await call(b, 'pulse_should_interrupt', { handle: handleB })).answer.needs_replan).toBe(true);

    // Without its handle an ack is refused, and frees nobody.
    const bare = (await call(a, 'pulse_ack_replan', { event_id: eventId })).answer;
    expect(bare).toMatchObject({ accepted: false, code: 'missing_handle' });
    // A made-up handle (B forging its way in) is another agent: A stays held.
    const forged = 'forgedHandle0000';
    await call(b, 'pulse_ack_replan', { event_id: eventId, handle: forged });
    expect((await call(a, 'pulse_should_interrupt', { handle: handleA })).answer.needs_replan).toBe(true);

    expect((await call(a, 'pulse_ack_replan', { event_id: eventId, handle: handleA })).answer.accepted).toBe(
      true,
    );
    expect((await call(a, 'pulse_should_interrupt', { handle: handleA })).answer.needs_replan).toBe(false);
    expect(
      (await call(b, 'pulse_should_interrupt', { handle: handleB })).answer.needs_replan,
      "A's ack freed B",
    ).toBe(true);
    const labels = (((await statusOf(daemon)).replan as Json).agents as Json[]).map((x) => x.label as string);
    for (const handle of [handleA, handleB])
      expect(labels).toContain(`Claude Code 2.1.332 (handle ${handle.slice(0, 8)}…)`);
  });

  it("knows a 2026 client that passes no handle by its hook's announcement of the call: each ack frees its own agent", async () => {
    const daemon = await serve();
    /** One Claude Code session: its 2026 client, and its hooks around each call to pulse's tools (tool_use_id in both, as Claude Code sends them). */
    const agent = async (session: string) => {
      const client = await modernClient(daemon.url);
      let uses = 0;
      const hook = (event: string, body: Json) =>
        fetch(
          `http://127.0.0.1:${daemon.port}/hook/claude/${event}?project=${encodeURIComponent(daemon.project)}`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              session_id: session,
              cwd: daemon.project,
              hook_event_name: event,
              ...body,
            }),
          },
        ).then((r) => r.json() as Promise<Json>);
      /** A call as Claude Code makes it: PreToolUse, then the request with its toolUseId in _meta (and no handle), then PostToolUse; `announced: false` skips the hooks. */
      const use = async (name: string, args: Json = {}, { announced = true } = {}) => {
        const id = `toolu_${session}_${++uses}`;
        const tool = { tool_name: `mcp__pulse__${name}`, tool_input: args, tool_use_id: id };
        if (announced) await hook('PreToolUse', tool);
        const result = (await client.callTool({
          name,
          arguments: args,
          _meta: { 'claudecode/toolUseId': id },
        })) as Json;
        if (announced) await hook('PostToolUse', { ...tool, tool_response: result });
        return result.structuredContent as Json;
      };
      // Its first tool call, a read, makes the session known to pulse before any MCP call.
      await hook('PreToolUse', {
        tool_name: 'Read',
        tool_input: { file_path: 'README.md' },
        tool_use_id: 'r',
      });
      return { use };
    };
    // A third session that never calls pulse's tools: no agent is tied by elimination.
    await agent('sessC');
    const a = await agent('sessA');
    const b = await agent('sessB');
    const handleA = (await a.use('pulse_should_interrupt')).agent_handle;
    const handleB = (await b.use('pulse_should_interrupt')).agent_handle;
    expect(handleA).not.toBe(handleB);
    // A second check-in is the same agent, by the same handle: no new agent per call.
    expect((await a.use('pulse_should_interrupt')).agent_handle).toBe(handleA);
    expect(((await statusOf(daemon)).replan as Json).agents).toHaveLength(3);

    await editGuidance(daemon, 'Use the new API.');
    const eventId = await waitUntil(
      async () =>
        ((await a.use('pulse_should_interrupt')).pending_replan_event_id as string | null) ?? undefined,
      { describe: () => 'the guidance change to be pending' },
    );
    // An ack no hook announced is refused (pulse cannot tell whose it is), and frees nobody.
    expect(await b.use('pulse_ack_replan', { event_id: eventId }, { announced: false })).toMatchObject({
      accepted: false,
      code: 'missing_handle',
    });
    expect(await a.use('pulse_ack_replan', { event_id: eventId })).toMatchObject({ accepted: true });
    expect((await a.use('pulse_should_interrupt')).needs_replan).toBe(false);
    expect((await b.use('pulse_should_interrupt')).needs_replan, "A's ack freed B").toBe(true);
    expect(await b.use('pulse_ack_replan', { event_id: eventId })).toMatchObject({ accepted: true });
    expect((await b.use('pulse_should_interrupt')).needs_replan).toBe(false);
    const agents = ((await statusOf(daemon)).replan as Json).agents as Json[];
    expect(agents.map((x) => x.tied_by).sort()).toEqual(['hook-announced', 'hook-announced', null]);
  });

  it('never ties two hook sessions into one agent through the one-shot identity a refused ack answers with', async () => {
    const daemon = await serve();
    const refusedAck = (session: string) =>
      fetch(
        `http://127.0.0.1:${daemon.port}/hook/copilot/postToolUse?project=${encodeURIComponent(daemon.project)}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            sessionId: session,
            timestamp: 0,
            cwd: daemon.project,
            toolName: 'pulse-pulse_ack_replan',
            toolArgs: { event_id: 'evt_x' },
            toolResult: {
              resultType: 'success',
              textResultForLlm: JSON.stringify({
                accepted: false,
                code: 'missing_handle',
                agent_id: 'one-shot',
              }),
            },
          }),
        },
      );
    // A nameless one-shot caller (a script's curl) is known to pulse as the one-shot identity.
    const oneShot = await fetch(daemon.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'pulse_should_interrupt', arguments: {} },
      }),
    });
    expect(
      ((await oneShot.json()) as { result: { structuredContent: Json } }).result.structuredContent.agent_id,
    ).toBe('one-shot');
    expect((await refusedAck('copilot-a')).status).toBe(200);
    expect((await refusedAck('copilot-b')).status).toBe(200);
    const agents = ((await statusOf(daemon)).replan as Json).agents as Json[];
    // The first may be tied to the one-shot caller by elimination (the only pair); the second stays its own agent.
    const parties = agents.map((a) => a.parties as string[]);
    expect(parties.find((p) => p.includes('hook:copilot:copilot-b'))).toEqual(['hook:copilot:copilot-b']);
  });

  it('keeps a 2026 client owing a change across a daemon restart, and frees it by its ack with the same handle', async () => {
    const daemon = await serve();
    const before = await modernClient(daemon.url);
    const handle = (await call(before, 'pulse_should_interrupt')).answer.agent_handle as string;
    await editGuidance(daemon, 'Use tabs.');
    const eventId = await pendingEvent(before, handle);
    expect(await daemon.stop('SIGTERM')).toBe(0);

    const again = await startDaemon(daemon.project);
    started.daemons.push(again);
    // Another agent acks first: that frees it only, not the agent the handle names.
    const legacy = await connectClient(again.url, { name: 'codex-mcp-client', version: '0.171.0' });
    started.clients.push(legacy);
    await legacy.callTool({ name: 'pulse_should_interrupt', arguments: {} });
    const legacyAck = (await legacy.callTool({
      name: 'pulse_ack_replan',
      arguments: { event_id: eventId },
    })) as Json;
    expect((legacyAck.structuredContent as Json).accepted).toBe(true);
    const after = await modernClient(again.url);
    const held = (await call(after, 'pulse_should_interrupt', { handle })).answer;
    expect(held).toMatchObject({
      needs_replan: true,
      pending_replan_event_id: eventId,
      agent_handle: handle,
    });
    // A 2026 client the daemon never heard of may be that agent reconnected: it owes the change too.
    const stranger = await modernClient(again.url, { name: 'other', version: '1.0.0' });
    expect((await call(stranger, 'pulse_should_interrupt')).answer.needs_replan).toBe(true);

    expect((await call(after, 'pulse_ack_replan', { event_id: eventId, handle })).answer.accepted).toBe(true);
    expect((await call(after, 'pulse_should_interrupt', { handle })).answer.needs_replan).toBe(false);
  });

  it('tells a subscriptions/listen stream that the context changed, and never lets the context or a decision be cached', async () => {
    const daemon = await serve();
    const client = await modernClient(daemon.url);
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', async (n) => {
      updates.push(n.params.uri);
    });
    const subscription = await client.listen({ resourceSubscriptions: ['pulse://context/latest'] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['pulse://context/latest']);

    const read = (await client.readResource({ uri: 'pulse://context/latest' })) as Json;
    expect(read).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    const { result } = await call(client, 'pulse_should_interrupt');
    expect(result).not.toHaveProperty('ttlMs');

    await editGuidance(daemon, 'Ship on Friday.');
    await waitUntil(() => updates.length > 0, { describe: () => 'notifications/resources/updated' });
    expect(updates).toContain('pulse://context/latest');
    expect(
      ((await client.readResource({ uri: 'pulse://context/latest' })).contents[0] as Json).text,
    ).toContain('Ship on Friday.');
    await subscription.close();
  });
});
