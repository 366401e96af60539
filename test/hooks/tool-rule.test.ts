import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/hooks/dialect.js';
import { patchPaths } from '../../src/hooks/dialects/input-fields.js';
import type { HookAgent } from '../../src/hooks/events.js';
import { judgeTool } from '../../src/hooks/tool-rule.js';

const ROOT = '/work/project';

const allowedWhilePending = async (
  tool: ToolCall,
  projectRoot: string,
  cwd: string,
  agent: HookAgent = 'claude',
) => (await judgeTool(agent, tool, { projectRoot, cwd, server: 'pulse' })).allowed;

describe('which tool calls run while a replan is pending', () => {
  it('runs an edit of the plan, whatever way its path is written', async () => {
    for (const path of [
      '/work/project/.pulse/plan.md',
      '.pulse/plan.md',
      './.pulse/plan.md',
      'x/../.pulse/plan.md',
    ]) {
      expect(await allowedWhilePending({ name: 'Write', paths: [path] }, ROOT, ROOT), path).toBe(true);
    }
    expect(
      await allowedWhilePending({ name: 'Edit', paths: ['../.pulse/plan.md'] }, ROOT, `${ROOT}/src`),
    ).toBe(true);
  });

  it('holds an edit of any other file, of the plan somewhere else, or of the plan and another file', async () => {
    for (const paths of [
      ['.pulse/guidance.md'],
      ['src/.pulse/plan.md'],
      ['/elsewhere/.pulse/plan.md'],
      ['.pulse/plan.md', 'src/index.ts'],
      [],
    ]) {
      expect(await allowedWhilePending({ name: 'apply_patch', paths }, ROOT, ROOT), paths.join(',')).toBe(
        false,
      );
    }
    expect(await allowedWhilePending({ name: 'Write', paths: ['.pulse/plan.md'] }, ROOT, `${ROOT}/src`)).toBe(
      false,
    );
  });

  it("runs pulse's own tools by their exact names under pulse's server, and no look-alike", async () => {
    const names: Array<[HookAgent, string, boolean]> = [
      ['claude', 'mcp__pulse__pulse_ack_replan', true],
      ['claude', 'mcp__pulse__pulse_should_interrupt', true],
      ['codex', 'mcp__pulse__pulse_ack_events', true],
      ['cursor', 'pulse_ack_replan', true],
      ['cursor', 'MCP:pulse:pulse_ack_events', true],
      ['gemini', 'mcp_pulse_pulse_ack_replan', true],
      ['gemini', 'mcp_pulse_pulse_should_interrupt', true],
      ['gemini', 'mcp_evil_pulse_ack_replan', false],
      ['gemini', 'mcp_pulse_evil_pulse_ack_replan', false],
      ['gemini', 'mcp__pulse__pulse_ack_replan', false],
      ['gemini', 'pulse_ack_replan', false],
      ['opencode', 'pulse_pulse_ack_replan', true],
      ['opencode', 'pulse_pulse_should_interrupt', true],
      ['opencode', 'pulse_ack_replan', false],
      ['opencode', 'evil_pulse_ack_replan', false],
      ['opencode', 'mcp__pulse__pulse_ack_replan', true],
      ['opencode', 'mcp__evil__pulse_ack_replan', false],
      ['gemini', 'pulse__pulse_ack_replan', true],
      ['gemini', 'evil__pulse_ack_replan', false],
      ['claude', 'mcp__my-pulse__pulse_should_interrupt', false],
      ['claude', 'mcp__evil__pulse_ack_replan', false],
      ['claude', 'mcp__evil_pulse_ack_replan', false],
      ['claude', 'pulse_ack_replan', false],
      ['claude', 'mcp__github__create_issue', false],
      ['claude', 'notpulse_ack_replan2', false],
      ['claude', 'mcp__pulse__pulse_ack_replan_now', false],
      ['claude', 'Task', false],
    ];
    for (const [agent, name, runs] of names) {
      expect(await allowedWhilePending({ name }, ROOT, ROOT, agent), `${agent} ${name}`).toBe(runs);
    }
  });

  it('runs read-only tools and read-only shell, holds other shell', async () => {
    expect(await allowedWhilePending({ name: 'Read' }, ROOT, ROOT)).toBe(true);
    expect(await allowedWhilePending({ name: 'ReadMcpResourceTool' }, ROOT, ROOT)).toBe(true);
    expect(await allowedWhilePending({ name: 'Bash', command: 'cat .pulse/guidance.md' }, ROOT, ROOT)).toBe(
      true,
    );
    expect(await allowedWhilePending({ name: 'Bash', command: 'npm publish' }, ROOT, ROOT)).toBe(false);
    expect(await allowedWhilePending({ name: 'Bash' }, ROOT, ROOT)).toBe(false);
  });

  it("runs Gemini CLI's reading and planning tools, and holds what acts: its subagents, skills, web search aside", async () => {
    for (const name of [
      'read_file',
      'glob',
      'grep_search',
      'write_todos',
      'enter_plan_mode',
      'google_web_search',
    ]) {
      expect(await allowedWhilePending({ name }, ROOT, ROOT, 'gemini'), name).toBe(true);
    }
    for (const name of ['invoke_agent', 'activate_skill', 'mcp_github_create_issue', 'Read']) {
      expect(await allowedWhilePending({ name }, ROOT, ROOT, 'gemini'), name).toBe(false);
    }
  });

  it("runs opencode's tools that read, search, keep its todos or ask, and holds a subagent, code mode, another server's tools and Claude Code's names", async () => {
    for (const name of [
      'read',
      'grep',
      'glob',
      'webfetch',
      'todowrite',
      'skill',
      'question',
      'read_mcp_resource',
    ])
      expect(await allowedWhilePending({ name }, ROOT, ROOT, 'opencode'), name).toBe(true);
    for (const name of ['task', 'Read', 'github_create_issue', 'execute'])
      expect(await allowedWhilePending({ name }, ROOT, ROOT, 'opencode'), name).toBe(false);
  });

  describe('through a symlinked folder', () => {
    let base = '';
    afterAll(() => rm(base, { recursive: true, force: true }));

    it('runs the plan edit when the agent names it through a link to the project', async () => {
      base = await mkdtemp(join(tmpdir(), 'pulse-rule-'));
      const real = join(base, 'real');
      await mkdir(join(real, '.pulse'), { recursive: true });
      await symlink(real, join(base, 'link'));
      const viaLink = join(base, 'link', '.pulse', 'plan.md');
      expect(await allowedWhilePending({ name: 'Write', paths: [viaLink] }, real, real)).toBe(true);
      expect(
        await allowedWhilePending(
          { name: 'Write', paths: [join(base, 'link', '.pulse', 'task.md')] },
          real,
          real,
        ),
      ).toBe(false);
    });
  });
});

describe('the files of a Codex apply_patch', () => {
  it('lists every file added, updated, deleted or moved to', () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: .pulse/plan.md',
      '@@',
      '+step',
      '*** Add File: src/new.ts',
      '+export {};',
      '*** Delete File: old.ts',
      '*** Update File: a.ts',
      '*** Move to: b.ts',
      '*** End Patch',
    ].join('\n');
    expect(patchPaths(patch)).toEqual(['.pulse/plan.md', 'src/new.ts', 'old.ts', 'a.ts', 'b.ts']);
  });
});
