import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackStarted } from '../support/started.js';
import {
  type ScriptedModel,
  startAnthropicModel,
  type ToolCall,
  type Turn,
  toolCalls,
} from './anthropic-model.js';
import { type ClaudeOptions, inAgentSuite, runClaude } from './claude.js';
import { pulseProjectForClaude, tempGitProject, writeJson } from './pulse-project.js';

/*
 * Which permission rules let Claude Code 2.1.332 run pulse's tools in `claude -p` with nobody to
 * click (test/agents/FINDINGS-claude.md, a). These pin the CLI's behaviour, not pulse's: when an
 * upgrade changes one, the setup pulse writes has to be looked at again.
 */

const started = trackStarted();
const models: ScriptedModel[] = [];

afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
  await started.cleanUp();
});

const use = (name: string, input: unknown): Turn => [{ type: 'tool_use', name, input }];

/** Runs `claude -p` in `project` with a model that makes these tool calls, one a turn; returns each call's outcome. */
const callTools = async (
  project: string,
  calls: Array<[string, unknown]>,
  options: Partial<ClaudeOptions> = {},
): Promise<{ calls: ToolCall[]; stderr: string; events: Array<Record<string, unknown>> }> => {
  const model = await startAnthropicModel({
    script: [
      ...calls.map(
        ([name, input]) =>
          () =>
            use(name, input),
      ),
      () => [{ type: 'text', text: 'Done.' }],
    ],
  });
  models.push(model);
  const run = await runClaude({ project, modelUrl: model.url, prompt: 'Go.', ...options });
  expect(model.problems).toEqual([]);
  return { calls: toolCalls(model.turns().at(-1)!), stderr: run.stderr, events: run.events };
};

const PULSE_TOOLS = ['pulse_should_interrupt', 'pulse_ack_replan', 'pulse_ack_events'];

/** pulse's check-in and ack, and the same tool of another server (`other` is the same daemon under another name). */
const PROBES: Array<[string, unknown]> = [
  ['mcp__pulse__pulse_should_interrupt', {}],
  ['mcp__pulse__pulse_ack_replan', { event_id: 'evt_unknown' }],
  ['mcp__other__pulse_should_interrupt', {}],
];

/** Which of the probes ran (the rest were refused for want of a permission). */
const ran = (calls: ToolCall[]) =>
  calls.map((call) => `${call.name}: ${call.result?.includes('requested permissions') ? 'denied' : 'ran'}`);

const ALL_DENIED = [
  'mcp__pulse__pulse_should_interrupt: denied',
  'mcp__pulse__pulse_ack_replan: denied',
  'mcp__other__pulse_should_interrupt: denied',
];
const PULSE_ONLY = [
  'mcp__pulse__pulse_should_interrupt: ran',
  'mcp__pulse__pulse_ack_replan: ran',
  'mcp__other__pulse_should_interrupt: denied',
];

const LOCAL = '.claude/settings.local.json';
const SHARED = '.claude/settings.json';

/** A project set up by pulse, with a second server name for the same daemon and `settings` merged into a settings file. */
const projectWith = async (file: string | null, settings: object) => {
  const { project, port } = await pulseProjectForClaude(started);
  const url = `http://127.0.0.1:${port}/mcp`;
  await writeJson(project, '.mcp.json', {
    mcpServers: { pulse: { type: 'http', url }, other: { type: 'http', url } },
  });
  // What Claude Code does with each rule, from none: without the rules pulse setup writes.
  const { permissions: _written, ...local } = JSON.parse(await readFile(join(project, LOCAL), 'utf8'));
  await writeJson(project, LOCAL, local);
  if (file !== null) {
    const current = existsSync(join(project, file))
      ? JSON.parse(await readFile(join(project, file), 'utf8'))
      : {};
    await writeJson(project, file, { ...current, ...settings });
  }
  return project;
};

describe.skipIf(!inAgentSuite)('Claude Code 2.1.332 permissions for MCP tools in -p mode', () => {
  it('connects a project .mcp.json server with no approval, and asks for every tool of it', async () => {
    const project = await projectWith(null, {});

    const { calls, events } = await callTools(project, PROBES);

    const init = events.find((event) => event.subtype === 'init') as { mcp_servers: unknown[] };
    expect(init.mcp_servers).toContainEqual({ name: 'pulse', status: 'connected', source: 'project' });
    expect(ran(calls)).toEqual(ALL_DENIED);
    expect(calls[0]!.result).toBe(
      "Claude requested permissions to use mcp__pulse__pulse_should_interrupt, but you haven't granted it yet.",
    );
  });

  it.each([
    ['the exact names', PULSE_TOOLS.map((tool) => `mcp__pulse__${tool}`)],
    ['the server', ['mcp__pulse']],
    ['the server with a wildcard', ['mcp__pulse__*']],
    ['a tool-name prefix wildcard', ['mcp__pulse__pulse_*']],
  ])('runs pulse’s tools, and no other server’s, when settings.local.json allows %s', async (_, allow) => {
    const project = await projectWith(LOCAL, { permissions: { allow } });

    expect(ran((await callTools(project, PROBES)).calls)).toEqual(PULSE_ONLY);
  });

  it('ignores allow rules of .claude/settings.json until the folder is trusted, and says so on stderr', async () => {
    const project = await projectWith(SHARED, { permissions: { allow: ['mcp__pulse'] } });

    const untrusted = await callTools(project, PROBES);
    const trusted = await callTools(project, PROBES, {
      userState: { projects: { [project]: { hasTrustDialogAccepted: true } } },
    });

    expect(ran(untrusted.calls)).toEqual(ALL_DENIED);
    expect(untrusted.stderr).toContain('Ignoring 1 permissions.allow entry from .claude/settings.json');
    expect(ran(trusted.calls)).toEqual(PULSE_ONLY);
  });

  it('ignores allow rules of a settings.local.json that git tracks', async () => {
    const project = await projectWith(LOCAL, { permissions: { allow: ['mcp__pulse'] } });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: project });
    git('add', '-f', LOCAL);
    git('commit', '-qm', 'settings');

    const { calls, stderr } = await callTools(project, PROBES);

    expect(ran(calls)).toEqual(ALL_DENIED);
    expect(stderr).toContain('Ignoring 1 permissions.allow entry from .claude/settings.local.json');
  });

  it('reads MCP resources and loads deferred tool schemas with no rule at all', async () => {
    const project = await projectWith(null, {});

    const { calls } = await callTools(project, [
      ['ListMcpResourcesTool', {}],
      ['ReadMcpResourceTool', { server: 'pulse', uri: 'pulse://context/latest' }],
      ['ToolSearch', { query: 'select:mcp__pulse__pulse_ack_replan' }],
    ]);

    expect(calls.map((call) => [call.name, call.isError])).toEqual([
      ['ListMcpResourcesTool', false],
      ['ReadMcpResourceTool', false],
      ['ToolSearch', false],
    ]);
    expect(calls[1]!.result).toContain('# PulseAgent Context');
  });

  it.each([
    ['Edit(/.pulse/plan.md)', true],
    ['Edit(.pulse/plan.md)', true],
    ['Write(/.pulse/plan.md)', false],
  ])('lets %s write .pulse/plan.md (%s) and no other file', async (rule, granted) => {
    const project = await tempGitProject(started);
    await writeJson(project, LOCAL, { permissions: { allow: [rule] } });
    const plan = join(project, '.pulse', 'plan.md');

    const { calls } = await callTools(project, [
      ['Write', { file_path: plan, content: 'plan v1\n' }],
      ['Edit', { file_path: plan, old_string: 'v1', new_string: 'v2' }],
      ['Write', { file_path: join(project, 'other.md'), content: 'x\n' }],
    ]);

    const [write, edit, other] = calls;
    expect(write!.isError).toBe(!granted);
    if (granted) {
      expect(edit!.isError).toBe(false);
      expect(await readFile(plan, 'utf8')).toBe('plan v2\n');
    }
    expect(other!.result).toContain('requested permissions to write');
  });
});
