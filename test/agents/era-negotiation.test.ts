import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAnthropicModel, toolCalls } from './anthropic-model.js';
import { inAgentSuite, runClaude } from './claude.js';
import { codexConfig, makeCodexHome, runCodexExec } from './codex.js';
import { type EraMode, type EraRequest, type EraServer, startEraServer } from './era-server.js';
import { startScriptedModel } from './openai-model.js';

/*
 * How the real Claude Code 2.1.332 and Codex 0.171.0 choose the MCP revision for a streamable HTTP
 * server, seen on the wire of a tiny server: the v2 SDK's createMcpHandler (2026-07-28 and 2025 on
 * one endpoint), or the v1 SDK's sessionful transport (2025 only). Each run calls the server's one
 * tool, so the revision of a tools/call is what the agent really uses.
 */

const cleanUps: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanUps.splice(0).map((cleanUp) => cleanUp()));
});

const tempDir = async (prefix: string) => {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanUps.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

const eraServer = async (mode: EraMode) => {
  const server = await startEraServer(mode);
  cleanUps.push(() => server.close());
  return server;
};

/** The JSON-RPC methods (or bare HTTP methods) the agent sent, in order. */
const methods = (requests: EraRequest[]) => requests.map((request) => request.method ?? request.httpMethod);

/** The one tools/call the agent sent. */
const toolCall = (requests: EraRequest[]) => requests.find((request) => request.method === 'tools/call');

/** `claude -p` whose scripted model calls `era_echo` once; what the tool answered. */
const claudeEchoes = async (server: EraServer, env: Record<string, string> = {}) => {
  const model = await startAnthropicModel({
    script: [
      () => [{ type: 'tool_use', name: 'mcp__era__era_echo', input: { text: 'hi' } }],
      () => [{ type: 'text', text: 'Done.' }],
    ],
  });
  cleanUps.push(() => model.close());
  const mcpConfig = JSON.stringify({ mcpServers: { era: { type: 'http', url: server.url } } });
  const run = await runClaude({
    project: await tempDir('pulse-era-claude-'),
    modelUrl: model.url,
    prompt: 'Echo hi.',
    args: ['--mcp-config', mcpConfig, '--strict-mcp-config', '--allowedTools', 'mcp__era__era_echo'],
    env,
  });
  expect(run.code, run.stderr).toBe(0);
  expect(model.problems).toEqual([]);
  return toolCalls(model.turns().at(-1)!)[0]?.result;
};

/** `codex exec` whose scripted model calls `era_echo` once (`features` on); what the tool answered. */
const codexEchoes = async (server: EraServer, features: string[] = []) => {
  let answered: string | undefined;
  const model = await startScriptedModel([
    () => [
      {
        type: 'function_call',
        namespace: 'mcp__era',
        name: 'era_echo',
        arguments: { text: 'hi' },
        call_id: 'echo',
      },
    ],
    (request) => {
      answered = request.outputOf('echo');
      return 'Done.';
    },
  ]);
  cleanUps.push(() => model.close());
  const table = `[mcp_servers.era]\nurl = ${JSON.stringify(server.url)}\ndefault_tools_approval_mode = "approve"\n`;
  const home = await makeCodexHome(codexConfig(model.baseUrl, table));
  cleanUps.push(() => home.remove());
  const run = await runCodexExec({
    cwd: await tempDir('pulse-era-codex-'),
    home,
    prompt: 'Echo hi.',
    args: ['--skip-git-repo-check', ...features.flatMap((feature) => ['--enable', feature])],
  });
  expect(run.code, run.stderr).toBe(0);
  expect(model.errors).toEqual([]);
  return answered;
};

/** Every request on 2026-07-28: the header and the _meta claim, no session, and who sent it. */
const expectModern = (requests: EraRequest[], clientInfo: object) => {
  for (const request of requests) {
    expect(request).toMatchObject({
      protocolVersionHeader: '2026-07-28',
      metaVersion: '2026-07-28',
      status: 200,
    });
    expect(request.sessionHeader).toBeUndefined();
    expect(request.metaClientInfo).toMatchObject(clientInfo);
  }
};

const CLAUDE_INFO = { name: 'claude-code', title: 'Claude Code', version: '2.1.332' };
const CODEX_INFO = { name: 'codex-mcp-client', title: 'Codex', version: '0.171.0' };

describe.skipIf(!inAgentSuite)('the MCP revision Claude Code 2.1.332 chooses', () => {
  it('probes server/discover and speaks 2026-07-28 to a server that answers it: no initialize, no session, clientInfo in every _meta', async () => {
    const server = await eraServer('both');
    expect(await claudeEchoes(server)).toContain('echo: hi');
    expect(methods(server.requests)).toEqual([
      'server/discover',
      'subscriptions/listen',
      'tools/list',
      'tools/call',
    ]);
    expectModern(server.requests, CLAUDE_INFO);
  });

  it('falls back to initialize at 2025-11-25 when server/discover is refused, and keeps the session it is given', async () => {
    const server = await eraServer('legacy-only');
    expect(await claudeEchoes(server)).toContain('echo: hi');
    expect(server.requests[0]).toMatchObject({
      method: 'server/discover',
      metaVersion: '2026-07-28',
      status: 400,
    });
    expect(server.requests[1]).toMatchObject({
      method: 'initialize',
      initializeVersion: '2025-11-25',
      status: 200,
    });
    expect(toolCall(server.requests)).toMatchObject({ protocolVersionHeader: '2025-11-25', status: 200 });
    expect(toolCall(server.requests)?.sessionHeader).toMatch(/^[0-9a-f-]{36}$/);
    expect(toolCall(server.requests)?.metaVersion).toBeUndefined();
  });

  it('never probes with MCP_PROTOCOL_NEGOTIATION=legacy: initialize at 2025-11-25 even where 2026-07-28 is served', async () => {
    const server = await eraServer('both');
    expect(await claudeEchoes(server, { MCP_PROTOCOL_NEGOTIATION: 'legacy' })).toContain('echo: hi');
    expect(methods(server.requests)).not.toContain('server/discover');
    expect(server.requests[0]).toMatchObject({ method: 'initialize', initializeVersion: '2025-11-25' });
    expect(toolCall(server.requests)).toMatchObject({ protocolVersionHeader: '2025-11-25', status: 200 });
  });
});

describe.skipIf(!inAgentSuite)('the MCP revision Codex 0.171.0 chooses', () => {
  it('by default never probes: initialize at 2025-06-18 even where 2026-07-28 is served', async () => {
    const server = await eraServer('both');
    expect(await codexEchoes(server)).toContain('echo: hi');
    expect(methods(server.requests)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/call',
    ]);
    expect(server.requests[0]).toMatchObject({ initializeVersion: '2025-06-18', metaVersion: undefined });
    expect(toolCall(server.requests)).toMatchObject({ protocolVersionHeader: '2025-06-18', status: 200 });
  });

  it('with its mcp_2026_07_28 feature on, probes server/discover and speaks 2026-07-28, clientInfo in every _meta', async () => {
    const server = await eraServer('both');
    expect(await codexEchoes(server, ['mcp_2026_07_28'])).toContain('echo: hi');
    expect(methods(server.requests)).toEqual(['server/discover', 'tools/list', 'tools/call']);
    expectModern(server.requests, CODEX_INFO);
  });

  it('with its mcp_2026_07_28 feature on, falls back to initialize at 2025-06-18 where server/discover is refused as an unsupported protocol version (the v1 SDK stateless)', async () => {
    const server = await eraServer('legacy-stateless');
    expect(await codexEchoes(server, ['mcp_2026_07_28'])).toContain('echo: hi');
    expect(server.requests[0]).toMatchObject({
      method: 'server/discover',
      metaVersion: '2026-07-28',
      status: 400,
    });
    expect(server.requests[1]).toMatchObject({ method: 'initialize', initializeVersion: '2025-06-18' });
    expect(toolCall(server.requests)).toMatchObject({ protocolVersionHeader: '2025-06-18', status: 200 });
  });

  it('with its mcp_2026_07_28 feature on, gives a 2025-only server up when server/discover is refused as not initialized (the v1 SDK sessionful): no initialize, no tool', async () => {
    const server = await eraServer('legacy-only');
    const answered = await codexEchoes(server, ['mcp_2026_07_28']);
    expect(methods(server.requests)).toEqual(['server/discover']);
    expect(server.requests[0]).toMatchObject({ metaVersion: '2026-07-28', status: 400 });
    expect(answered).not.toContain('echo: hi');
  });
});
