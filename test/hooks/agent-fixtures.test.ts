import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type HookAgent, isHookAgent } from '../../src/hooks/events.js';
import { type HookCall, parseHookInput } from '../../src/hooks/hook-input.js';
import { judgeTool } from '../../src/hooks/tool-rule.js';

/*
 * The hook inputs the real agents sent, captured by a probe hook (test/agents/FINDINGS-codex.md,
 * "Hook inputs"): one folder per agent release, `<agent>-<version>`, with the project path
 * replaced by /PROJECT and the session id by a fixed word. Each must read as pulse expects.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/hooks/', import.meta.url));

/** Each fixture folder, with the agent its name starts with. */
const allFolders = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map(({ name }) => ({ name, agent: name.slice(0, name.indexOf('-')) }));

/** Agents whose captures wait for pulse to read them (issue 24 phase 2): kept, not yet parsed here. */
const AWAITING = ['gemini', 'copilot'];

/** opencode's captures are its plugin hooks' `{input, output}`, not one hook input each: read below. */
const PLUGIN_CAPTURES = ['opencode'];

const folders = allFolders.filter(
  ({ agent }) => !AWAITING.includes(agent) && !PLUGIN_CAPTURES.includes(agent),
);

type Input = Record<string, unknown> & { hook_event_name: string; tool_input?: Record<string, unknown> };

const fixtures = (folder: string) =>
  readdirSync(join(FIXTURES, folder))
    .filter((file) => file.endsWith('.json'))
    .map((file) => {
      const text = readFileSync(join(FIXTURES, folder, file), 'utf8');
      return { file, text, input: JSON.parse(text) as Input };
    });

/** Claude Code's hook events, which Codex reuses, by where in the loop each runs. */
const CLAUDE_CODE_PHASES: Record<string, HookCall['phase']> = {
  SessionStart: 'session-start',
  UserPromptSubmit: 'prompt',
  PreToolUse: 'pre-tool',
  PostToolUse: 'post-tool',
  Stop: 'stop',
};

/** The events pulse answers, as the agents' documentation names them; any other one it leaves alone. */
const PHASES: Record<Exclude<HookAgent, 'opencode'>, Record<string, HookCall['phase']>> = {
  claude: CLAUDE_CODE_PHASES,
  codex: CLAUDE_CODE_PHASES,
  cursor: {
    beforeSubmitPrompt: 'prompt',
    beforeShellExecution: 'pre-tool',
    beforeMCPExecution: 'pre-tool',
    stop: 'stop',
  },
};

/** The files an `apply_patch` envelope names in its headers. */
const patchedFiles = (patch: string) =>
  patch
    .split('\n')
    .filter((line) => /^\*\*\* (Add|Update|Delete) File: /.test(line))
    .map((line) => line.slice(line.indexOf(': ') + 2));

/** The tool call pulse should judge for a tool event: a shell line, the files a patch writes, or just a name. */
const expectedTool = (agent: string, input: Input) => {
  // Cursor names the event, not the tool: a shell command, or an MCP tool by name.
  if (agent === 'cursor' && input.hook_event_name === 'beforeShellExecution') {
    return { name: 'shell', command: input.command };
  }
  const name = input.tool_name as string;
  const args = input.tool_input ?? {};
  if (name === 'Bash') return { name, command: args.command };
  if (['Write', 'Edit', 'MultiEdit'].includes(name)) return { name, paths: [args.file_path] };
  if (name === 'apply_patch') return { name, paths: patchedFiles(args.command as string) };
  return { name };
};

const parse = (agent: HookAgent, text: string) => parseHookInput(agent, undefined, text);

const callOf = (agent: HookAgent, text: string): HookCall => {
  const parsed = parse(agent, text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed.call;
};

describe('hook inputs captured from the real agents', () => {
  it('has folders of captures for Claude Code 2.1.332 and Codex 0.171.0, each named for an agent pulse knows', () => {
    expect(folders.map((folder) => folder.name)).toEqual(
      expect.arrayContaining(['claude-2.1.332', 'codex-0.171.0']),
    );
    for (const { name, agent } of allFolders)
      expect(isHookAgent(agent) || AWAITING.includes(agent), name).toBe(true);
  });

  describe.each(folders)('$name', ({ name, agent }) => {
    const known = PHASES[agent as keyof typeof PHASES];

    it.each(fixtures(name).filter(({ input }) => input.hook_event_name in known))(
      'reads $file as its phase, session, project and tool call',
      ({ text, input }) => {
        const phase = known[input.hook_event_name]!;
        const tool = phase === 'pre-tool' || phase === 'post-tool' ? expectedTool(agent, input) : null;
        expect(callOf(agent as HookAgent, text)).toEqual({
          agent,
          event: input.hook_event_name,
          phase,
          // Each capture replaced its session id with a fixed word of its own.
          session: input.session_id ?? input.conversation_id,
          cwd: '/PROJECT',
          tool,
          // These captures predate agent_id in pulse's answers.
          answeredAgentId: null,
        });
      },
    );

    const unanswered = fixtures(name).filter(({ input }) => !(input.hook_event_name in known));
    it.skipIf(unanswered.length === 0).each(unanswered)(
      'reports $file as an event pulse does not answer',
      ({ text, input }) => {
        expect(parse(agent as HookAgent, text)).toEqual({
          problem: expect.stringContaining(`"${input.hook_event_name}" is not a ${agent} hook event`),
        });
      },
    );
  });
});

describe("pulse's own answer in a PostToolUse input names the MCP caller", () => {
  const withAgentId = (file: string, edit: (input: Record<string, unknown>) => void) => {
    const input = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'));
    edit(input);
    return JSON.stringify(input);
  };
  it('reads it from Codex, which passes the result object', () => {
    const text = withAgentId('codex-0.171.0/PostToolUse-mcp__pulse__pulse_ack_replan.json', (input) => {
      const response = input.tool_response as { content: Array<{ text: string }>; structuredContent: object };
      response.structuredContent = { ...response.structuredContent, agent_id: 'session:4f1c' };
      response.content[0]!.text = JSON.stringify(response.structuredContent);
    });
    expect(callOf('codex', text).answeredAgentId).toBe('session:4f1c');
  });
  it('reads it from Claude Code, which passes the text', () => {
    const text = withAgentId(
      'claude-2.1.332/PostToolUse-mcp__pulse__pulse_should_interrupt.json',
      (input) => {
        input.tool_response = JSON.stringify({
          ...JSON.parse(input.tool_response as string),
          agent_id: 'session:9a',
        });
      },
    );
    expect(callOf('claude', text).answeredAgentId).toBe('session:9a');
  });
});

describe("Codex 0.171.0's tool calls, judged while a replan is pending", () => {
  const judge = async (file: string) => {
    const text = readFileSync(join(FIXTURES, 'codex-0.171.0', file), 'utf8');
    const call = callOf('codex', text);
    return judgeTool('codex', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };

  it('holds the shell command `touch src-file`, saying what in it is more than reading', async () => {
    expect(await judge('PreToolUse-Bash.json')).toEqual({
      pulseTool: false,
      allowed: false,
      why: expect.any(String),
    });
  });

  it("runs pulse's own tools, by the names Codex gives them", async () => {
    for (const file of [
      'PreToolUse-mcp__pulse__pulse_ack_replan.json',
      'PreToolUse-mcp__pulse__pulse_should_interrupt.json',
    ]) {
      expect(await judge(file), file).toEqual({ pulseTool: true, allowed: true });
    }
  });

  it('runs an apply_patch of .pulse/plan.md', async () => {
    expect(await judge('PreToolUse-apply_patch.json')).toEqual({ pulseTool: false, allowed: true });
  });
});

describe("Claude Code 2.1.332's tool calls, judged while a replan is pending", () => {
  const judge = async (file: string) => {
    const text = readFileSync(join(FIXTURES, 'claude-2.1.332', file), 'utf8');
    const call = callOf('claude', text);
    return judgeTool('claude', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };

  it('holds its Bash call, saying what in it is more than reading', async () => {
    expect(await judge('PreToolUse-Bash.json')).toEqual({
      pulseTool: false,
      allowed: false,
      why: expect.any(String),
    });
  });

  it('runs what the replan needs: reading, loading tool schemas, its task list, MCP resources, pulse itself', async () => {
    for (const file of [
      'PreToolUse-Read.json',
      'PreToolUse-ToolSearch.json',
      'PreToolUse-TaskCreate.json',
      'PreToolUse-ReadMcpResourceTool.json',
    ]) {
      expect(await judge(file), file).toEqual({ pulseTool: false, allowed: true });
    }
    expect(await judge('PreToolUse-mcp__pulse__pulse_should_interrupt.json')).toEqual({
      pulseTool: true,
      allowed: true,
    });
  });
});

describe("opencode 1.18.33's plugin hook calls, as pulse's plugin posts them", () => {
  const FOLDER = 'opencode-1.18.33';
  /** The hooks pulse's plugin posts, by the event it posts them as (a bus event's type for `event`). */
  const POSTED: Record<string, HookCall['phase']> = {
    'chat.message': 'prompt',
    'tool.execute.before': 'pre-tool',
    'tool.execute.after': 'post-tool',
    'session.idle': 'stop',
  };
  /** A hook call as captured (`<hook>[-<tool>].json`), or a bus event (`event-<type>.json`). */
  type Capture = {
    input: Record<string, unknown>;
    output?: Record<string, unknown>;
    type?: string;
    properties?: Record<string, unknown>;
  };
  const captures = readdirSync(join(FIXTURES, FOLDER))
    .filter((file) => file.endsWith('.json'))
    .map((file) => {
      const capture = JSON.parse(readFileSync(join(FIXTURES, FOLDER, file), 'utf8')) as Capture;
      const event = file.startsWith('event-') ? capture.type! : file.replace(/\.json$/, '').split('-')[0]!;
      return { file, event, capture };
    });
  /** The JSON the plugin posts for a capture: the project, opencode's input (a bus event's properties), and the output where it sends one. */
  const posted = (event: string, capture: Capture) => {
    if (capture.properties !== undefined) return { directory: '/PROJECT', input: capture.properties };
    if (event === 'tool.execute.after' && !String(capture.input.tool).startsWith('pulse_'))
      return { directory: '/PROJECT', input: capture.input };
    return { directory: '/PROJECT', ...capture };
  };
  const read = (event: string, body: object) => {
    const parsed = parseHookInput('opencode', event, JSON.stringify(body));
    if ('problem' in parsed) throw new Error(parsed.problem);
    return parsed.call;
  };
  const answered = captures.filter(({ event }) => event in POSTED);

  it('has a capture of each hook the plugin posts', () => {
    expect(new Set(answered.map(({ event }) => event))).toEqual(new Set(Object.keys(POSTED)));
  });

  it.each(answered)('reads $file as its phase, session, project and tool call', ({ event, capture }) => {
    const phase = POSTED[event]!;
    const name = String(capture.input?.tool);
    const args = (phase === 'pre-tool' ? capture.output?.args : capture.input?.args) as Record<
      string,
      unknown
    >;
    const tool =
      phase !== 'pre-tool' && phase !== 'post-tool'
        ? null
        : name === 'bash'
          ? { name, command: args.command }
          : name === 'write' || name === 'edit'
            ? { name, paths: [args.filePath] }
            : { name };
    expect(read(event, posted(event, capture))).toEqual({
      agent: 'opencode',
      event,
      phase,
      session: 'ses_ID',
      cwd: '/PROJECT',
      tool,
      // pulse's own answer, which the plugin posts after pulse's tools, names the MCP session.
      answeredAgentId: phase === 'post-tool' && name.startsWith('pulse_') ? 'session:MCP_SESSION' : null,
    });
  });

  it.each(captures.filter(({ event }) => !(event in POSTED)))(
    'reports $file as a hook pulse does not answer',
    ({ event }) => {
      expect(parseHookInput('opencode', event, '{}')).toEqual({
        problem: expect.stringContaining(`"${event}" is not a opencode hook event`),
      });
    },
  );

  const judge = async (file: string, edit: (capture: Capture) => void = () => {}) => {
    const { event, capture } = captures.find((entry) => entry.file === file)!;
    const copy = structuredClone(capture);
    edit(copy);
    const call = read(event, posted(event, copy));
    return judgeTool('opencode', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };

  it('holds its bash call `touch made-by-shell`, saying what in it is more than reading', async () => {
    expect(await judge('tool.execute.before-bash.json')).toEqual({
      pulseTool: false,
      allowed: false,
      why: expect.any(String),
    });
  });

  it('runs what the replan needs: reading, searching, its todos, pulse itself', async () => {
    for (const tool of ['read', 'grep', 'glob', 'todowrite'])
      expect(await judge(`tool.execute.before-${tool}.json`), tool).toEqual({
        pulseTool: false,
        allowed: true,
      });
    for (const tool of ['pulse_pulse_should_interrupt', 'pulse_pulse_ack_replan'])
      expect(await judge(`tool.execute.before-${tool}.json`), tool).toEqual({
        pulseTool: true,
        allowed: true,
      });
  });

  it('runs a write or an edit of .pulse/plan.md only, holding one of any other file', async () => {
    expect((await judge('tool.execute.before-write.json')).allowed).toBe(false);
    expect((await judge('tool.execute.before-edit.json')).allowed).toBe(false);
    const toPlan = (capture: Capture) => {
      (capture.output!.args as Record<string, unknown>).filePath = '/PROJECT/.pulse/plan.md';
    };
    expect((await judge('tool.execute.before-write.json', toPlan)).allowed).toBe(true);
    expect((await judge('tool.execute.before-edit.json', toPlan)).allowed).toBe(true);
  });
});
