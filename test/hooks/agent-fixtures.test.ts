import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type HookAgent, isHookAgent } from '../../src/hooks/events.js';
import { type HookCall, parseHookInput } from '../../src/hooks/hook-input.js';
import { formatVerdict } from '../../src/hooks/hook-output.js';
import { judgeTool } from '../../src/hooks/tool-rule.js';

/*
 * The hook inputs the real agents sent, captured by a probe hook (test/agents/FINDINGS-codex.md,
 * "Hook inputs"): one folder per agent release, `<agent>-<version>`, with the project path
 * replaced by /PROJECT and the session id by a fixed word; `<agent>-docs-<version>` holds the
 * inputs an agent that cannot run here documents. Each must read as pulse expects.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/hooks/', import.meta.url));

/** Each fixture folder, with the agent its name starts with. */
const allFolders = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map(({ name }) => ({ name, agent: name.slice(0, name.indexOf('-')) }));

/** opencode's captures are its plugin hooks' `{input, output}`, not one hook input each: read below. */
const PLUGIN_CAPTURES = ['opencode'];

const folders = allFolders.filter(({ agent }) => !PLUGIN_CAPTURES.includes(agent));

type Input = Record<string, unknown> & { hook_event_name: string; tool_input?: Record<string, unknown> };

/** The event of a capture: its `hook_event_name`, or, for Copilot's inputs, which name none, the file name's first word. */
const eventOf = (file: string, input: Record<string, unknown>): string =>
  typeof input.hook_event_name === 'string' ? input.hook_event_name : file.replace(/(-.*)?\.json$/, '');

const fixtures = (folder: string) =>
  readdirSync(join(FIXTURES, folder))
    .filter((file) => file.endsWith('.json'))
    .map((file) => {
      const text = readFileSync(join(FIXTURES, folder, file), 'utf8');
      const parsed = JSON.parse(text) as Record<string, unknown>;
      return { file, text, input: { ...parsed, hook_event_name: eventOf(file, parsed) } as Input };
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
  gemini: {
    SessionStart: 'session-start',
    BeforeAgent: 'prompt',
    BeforeTool: 'pre-tool',
    AfterTool: 'post-tool',
    AfterAgent: 'stop',
  },
  copilot: {
    sessionStart: 'session-start',
    userPromptSubmitted: 'prompt',
    preToolUse: 'pre-tool',
    postToolUse: 'post-tool',
    agentStop: 'stop',
  },
  vscode: CLAUDE_CODE_PHASES,
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
  if (agent === 'copilot') {
    const name = input.toolName as string;
    const args = input.toolArgs as Record<string, unknown>;
    if (name === 'bash') return { name, command: args.command };
    if (['create', 'edit'].includes(name)) return { name, paths: [args.path] };
    if (name === 'apply_patch') return { name, paths: patchedFiles(input.toolArgs as string) };
    return { name };
  }
  const name = input.tool_name as string;
  const args = input.tool_input ?? {};
  if (name === 'Bash' || name === 'run_shell_command' || name === 'run_in_terminal')
    return { name, command: args.command };
  if (['replace_string_in_file', 'create_file'].includes(name)) return { name, paths: [args.filePath] };
  if (['Write', 'Edit', 'MultiEdit', 'write_file', 'replace'].includes(name))
    return { name, paths: [args.file_path] };
  if (name === 'apply_patch') return { name, paths: patchedFiles(args.command as string) };
  return { name };
};

/**
 * The agent_id pulse's answer in a capture names: Copilot CLI speaks 2026-07-28 to pulse, so its
 * check-in names the handle pulse minted, and its ack (the smoke test sets up no pulse hook to
 * announce it, so pulse cannot tell whose it is) was refused as a one-shot caller's.
 */
const answeredIn = (agent: string, input: Input): string => {
  if (agent !== 'copilot') return 'session:MCP_SESSION';
  return String(input.toolName).endsWith('pulse_ack_replan') ? 'one-shot' : 'handle:HANDLE';
};

/** Reads a capture as pulse does: Copilot's hooks are set up with `--event`, the others' inputs name it. */
const parse = (agent: HookAgent, text: string, event?: string) =>
  parseHookInput(agent, agent === 'copilot' ? event : undefined, text);

const callOf = (agent: HookAgent, text: string, event?: string): HookCall => {
  const parsed = parse(agent, text, event);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed.call;
};

describe('hook inputs captured from the real agents', () => {
  it("has folders of captures for Claude Code 2.1.332, Codex 0.171.0 and Copilot CLI 1.0.102, Gemini CLI 0.61.0, and Cursor's and VS Code's documented inputs, each named for an agent pulse knows", () => {
    expect(folders.map((folder) => folder.name)).toEqual(
      expect.arrayContaining([
        'claude-2.1.332',
        'codex-0.171.0',
        'copilot-1.0.102',
        'gemini-0.61.0',
        'cursor-docs-1.7',
        'vscode-docs-1.110',
      ]),
    );
    for (const { name, agent } of allFolders) expect(isHookAgent(agent), name).toBe(true);
  });

  describe.each(folders)('$name', ({ name, agent }) => {
    const known = PHASES[agent as keyof typeof PHASES];

    it.each(fixtures(name).filter(({ input }) => input.hook_event_name in known))(
      'reads $file as its phase, session, project and tool call',
      ({ text, input }) => {
        const phase = known[input.hook_event_name]!;
        const called = phase === 'pre-tool' || phase === 'post-tool' ? expectedTool(agent, input) : null;
        // Claude Code's and Codex's own id of the call, which a 2026-07-28 request without a handle is matched by.
        const useId =
          (agent === 'claude' || agent === 'codex') && typeof input.tool_use_id === 'string'
            ? { useId: input.tool_use_id }
            : {};
        const tool = called === null ? null : { ...called, ...useId };
        // Copilot's captures keep pulse's answer (its handle as HANDLE); the others predate agent_id in it.
        // Gemini's too, for its tools named mcp_pulse_….
        const answered =
          (agent === 'copilot' && phase === 'post-tool' && String(input.toolName).startsWith('pulse-')) ||
          (agent === 'gemini' && phase === 'post-tool' && String(input.tool_name).startsWith('mcp_pulse_'));
        expect(callOf(agent as HookAgent, text, input.hook_event_name)).toEqual({
          agent,
          event: input.hook_event_name,
          phase,
          // Each capture replaced its session id with a fixed word of its own; a Copilot subagent's is its parent's.
          session: input.session_id ?? input.conversation_id ?? input.parentAgentId ?? input.sessionId,
          cwd: '/PROJECT',
          tool,
          answeredAgentId: answered ? answeredIn(agent, input) : null,
          ...(input.parentAgentId === undefined ? {} : { subagent: true }),
        });
      },
    );

    const unanswered = fixtures(name).filter(({ input }) => !(input.hook_event_name in known));
    it.skipIf(unanswered.length === 0).each(unanswered)(
      'reports $file as an event pulse does not answer',
      ({ text, input }) => {
        expect(parse(agent as HookAgent, text, input.hook_event_name)).toEqual({
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

describe("Cursor 1.7's documented calls, judged while a replan is pending", () => {
  const judge = async (file: string) => {
    const text = readFileSync(join(FIXTURES, 'cursor-docs-1.7', file), 'utf8');
    const call = callOf('cursor', text);
    return judgeTool('cursor', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };

  it('holds the shell command `touch src-file` and runs `cat .pulse/guidance.md`', async () => {
    expect(await judge('beforeShellExecution-touch.json')).toMatchObject({ allowed: false });
    expect(await judge('beforeShellExecution-cat.json')).toEqual({ pulseTool: false, allowed: true });
  });

  it("runs pulse's own tool by the bare name beforeMCPExecution reports, and holds another server's", async () => {
    expect(await judge('beforeMCPExecution-pulse_ack_replan.json')).toEqual({
      pulseTool: true,
      allowed: true,
    });
    expect(await judge('beforeMCPExecution-create_issue.json')).toMatchObject({
      pulseTool: false,
      allowed: false,
    });
  });
});

describe("VS Code 1.110's documented calls", () => {
  const text = (file: string) => readFileSync(join(FIXTURES, 'vscode-docs-1.110', file), 'utf8');
  const judge = async (file: string) => {
    const call = callOf('vscode', text(file));
    return judgeTool('vscode', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };

  it("holds a terminal command that writes and a new source file; runs reading, the plan edit and pulse's own tools", async () => {
    expect(await judge('PreToolUse-run_in_terminal-touch.json')).toMatchObject({ allowed: false });
    expect(await judge('PreToolUse-create_file-src.json')).toEqual({ pulseTool: false, allowed: false });
    expect(await judge('PreToolUse-run_in_terminal-cat.json')).toEqual({ pulseTool: false, allowed: true });
    expect(await judge('PreToolUse-read_file.json')).toEqual({ pulseTool: false, allowed: true });
    expect(await judge('PreToolUse-replace_string_in_file-plan.json')).toEqual({
      pulseTool: false,
      allowed: true,
    });
    expect(await judge('PreToolUse-mcp_pulse_pulse_ack_replan.json')).toEqual({
      pulseTool: true,
      allowed: true,
    });
  });

  it.each(['claude', 'codex'] as const)(
    "is read as VS Code's when it runs %s's hook file, under the event it names",
    (agent) => {
      const call = callOf(agent, text('Stop.json'));
      expect(call).toMatchObject({ agent: 'vscode', event: 'Stop', phase: 'stop', session: 'SESSION_ID' });
    },
  );

  it('holds a stop inside hookSpecificOutput, where VS Code reads it, and a tool call as Claude Code does', () => {
    const hold = { hold: 'A replan is pending (evt_1).' };
    expect(formatVerdict({ agent: 'vscode', event: 'Stop', phase: 'stop' }, hold)).toBe(
      JSON.stringify({ hookSpecificOutput: { hookEventName: 'Stop', decision: 'block', reason: hold.hold } }),
    );
    expect(
      JSON.parse(formatVerdict({ agent: 'vscode', event: 'PreToolUse', phase: 'pre-tool' }, hold)),
    ).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: hold.hold,
      },
    });
  });
});

describe("Copilot CLI 1.0.102's tool calls, judged while a replan is pending", () => {
  const read = (file: string) => readFileSync(join(FIXTURES, 'copilot-1.0.102', file), 'utf8');
  const judge = async (text: string) => {
    const call = callOf('copilot', text, 'preToolUse');
    return judgeTool('copilot', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };
  const held = { pulseTool: false, allowed: false };

  it('holds its shell command `touch`, its file edits and a subagent task', async () => {
    expect(await judge(read('preToolUse-bash.json'))).toEqual({ ...held, why: expect.any(String) });
    for (const file of ['preToolUse-create.json', 'preToolUse-edit.json', 'preToolUse-task.json'])
      expect(await judge(read(file)), file).toEqual(held);
    // gpt-5 models patch files with apply_patch, whose arguments are the patch text itself.
    expect(await judge(read('preToolUse-apply_patch.json'))).toEqual(held);
  });

  it('runs what the replan needs: reading, searching, its todo list, pulse itself', async () => {
    for (const file of [
      'preToolUse-view.json',
      'preToolUse-grep.json',
      'preToolUse-glob.json',
      'preToolUse-sql.json',
    ])
      expect(await judge(read(file)), file).toEqual({ pulseTool: false, allowed: true });
    for (const file of [
      'preToolUse-pulse-pulse_should_interrupt.json',
      'preToolUse-pulse-pulse_ack_replan.json',
    ])
      expect(await judge(read(file)), file).toEqual({ pulseTool: true, allowed: true });
  });

  it('runs an edit, a create or a patch of .pulse/plan.md only, as an object or, as older releases pass them, a JSON string', async () => {
    const plan = '/PROJECT/.pulse/plan.md';
    const edit = JSON.parse(read('preToolUse-edit.json'));
    edit.toolArgs.path = plan;
    expect(await judge(JSON.stringify(edit))).toEqual({ pulseTool: false, allowed: true });
    edit.toolArgs = JSON.stringify(edit.toolArgs);
    expect(await judge(JSON.stringify(edit))).toEqual({ pulseTool: false, allowed: true });
    const create = JSON.parse(read('preToolUse-create.json'));
    create.toolArgs.path = '.pulse/plan.md';
    expect(await judge(JSON.stringify(create))).toEqual({ pulseTool: false, allowed: true });
    const patch = JSON.parse(read('preToolUse-apply_patch.json'));
    patch.toolArgs = '*** Begin Patch\n*** Update File: .pulse/plan.md\n@@\n-a\n+b\n*** End Patch\n';
    expect(await judge(JSON.stringify(patch))).toEqual({ pulseTool: false, allowed: true });
  });

  it('holds its own edit of .pulse/guidance.md, runs a bash command that only reads it, holds one that writes it', async () => {
    for (const file of ['preToolUse-edit.json', 'preToolUse-create.json']) {
      const edit = JSON.parse(read(file));
      edit.toolArgs.path = '/PROJECT/.pulse/guidance.md';
      expect(await judge(JSON.stringify(edit)), file).toEqual(held);
    }
    const bash = JSON.parse(read('preToolUse-bash.json'));
    bash.toolArgs.command = 'cat .pulse/guidance.md';
    expect(await judge(JSON.stringify(bash))).toEqual({ pulseTool: false, allowed: true });
    bash.toolArgs.command = 'echo later >> .pulse/guidance.md';
    expect(await judge(JSON.stringify(bash))).toEqual({ ...held, why: expect.any(String) });
  });

  it("holds another server's tool named like pulse's, and pulse's under another name", async () => {
    const other = JSON.parse(read('preToolUse-pulse-pulse_ack_replan.json'));
    other.toolName = 'github-pulse_ack_replan';
    expect(await judge(JSON.stringify(other))).toEqual(held);
    other.toolName = 'pulse/pulse_ack_replan';
    expect(await judge(JSON.stringify(other))).toEqual(held);
  });
});

describe("Gemini CLI 0.61.0's tool calls, judged while a replan is pending", () => {
  const judge = async (file: string) => {
    const text = readFileSync(join(FIXTURES, 'gemini-0.61.0', file), 'utf8');
    const call = callOf('gemini', text);
    return judgeTool('gemini', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };

  it('holds its shell command `touch made`, saying what in it is more than reading', async () => {
    expect(await judge('BeforeTool-run_shell_command.json')).toEqual({
      pulseTool: false,
      allowed: false,
      why: expect.any(String),
    });
  });

  it('runs what the replan needs: reading, searching, listing, its todos, MCP resources, the plan edit, pulse itself', async () => {
    for (const file of [
      'BeforeTool-read_file.json',
      'BeforeTool-glob.json',
      'BeforeTool-grep_search.json',
      'BeforeTool-list_directory.json',
      'BeforeTool-write_todos.json',
      'BeforeTool-read_mcp_resource.json',
      'BeforeTool-write_file.json',
      'BeforeTool-replace.json',
    ]) {
      expect(await judge(file), file).toEqual({ pulseTool: false, allowed: true });
    }
    for (const file of [
      'BeforeTool-mcp_pulse_pulse_should_interrupt.json',
      'BeforeTool-mcp_pulse_pulse_ack_replan.json',
    ]) {
      expect(await judge(file), file).toEqual({ pulseTool: true, allowed: true });
    }
  });

  const edited = async (file: string, edit: (input: Record<string, Record<string, unknown>>) => void) => {
    const input = JSON.parse(readFileSync(join(FIXTURES, 'gemini-0.61.0', file), 'utf8'));
    edit(input);
    const call = callOf('gemini', JSON.stringify(input));
    return judgeTool('gemini', call.tool!, { projectRoot: '/PROJECT', cwd: call.cwd, server: 'pulse' });
  };

  it('runs a shell command that only reads .pulse/guidance.md, holds one that writes it and its own replace of it', async () => {
    const shell = (command: string) => (input: Record<string, Record<string, unknown>>) => {
      input.tool_input!.command = command;
    };
    expect(await edited('BeforeTool-run_shell_command.json', shell('cat .pulse/guidance.md'))).toEqual({
      pulseTool: false,
      allowed: true,
    });
    expect(
      (await edited('BeforeTool-run_shell_command.json', shell('echo x > .pulse/guidance.md'))).allowed,
    ).toBe(false);
    const replace = await edited('BeforeTool-replace.json', (input) => {
      input.tool_input!.file_path = '.pulse/guidance.md';
    });
    expect(replace.allowed).toBe(false);
  });

  it("runs pulse's tools by the name older Gemini CLI releases gave them (`pulse__<tool>`), and no other server's", async () => {
    const named = (tool_name: string) => (input: Record<string, unknown>) => {
      input.tool_name = tool_name;
    };
    const file = 'BeforeTool-mcp_pulse_pulse_ack_replan.json';
    expect(await edited(file, named('pulse__pulse_ack_replan'))).toEqual({ pulseTool: true, allowed: true });
    for (const name of ['github__pulse_ack_replan', 'pulse_ack_replan', 'mcp_github_pulse_ack_replan'])
      expect(await edited(file, named(name)), name).toEqual({ pulseTool: false, allowed: false });
  });

  it('holds a write_file of any file but .pulse/plan.md, relative or absolute', async () => {
    const text = readFileSync(join(FIXTURES, 'gemini-0.61.0', 'BeforeTool-write_file.json'), 'utf8');
    for (const file_path of ['notes.txt', '/PROJECT/.pulse/guidance.md', '../.pulse/plan.md']) {
      const input = JSON.parse(text);
      input.tool_input.file_path = file_path;
      const call = callOf('gemini', JSON.stringify(input));
      const judged = await judgeTool('gemini', call.tool!, {
        projectRoot: '/PROJECT',
        cwd: call.cwd,
        server: 'pulse',
      });
      expect(judged.allowed, file_path).toBe(false);
    }
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

  it('holds its own write of .pulse/guidance.md and a bash call that writes it, runs one that only reads it', async () => {
    const toGuidance = (capture: Capture) => {
      (capture.output!.args as Record<string, unknown>).filePath = '/PROJECT/.pulse/guidance.md';
    };
    expect((await judge('tool.execute.before-write.json', toGuidance)).allowed).toBe(false);
    expect((await judge('tool.execute.before-edit.json', toGuidance)).allowed).toBe(false);
    const shell = (command: string) => (capture: Capture) => {
      (capture.output!.args as Record<string, unknown>).command = command;
    };
    expect((await judge('tool.execute.before-bash.json', shell('cat .pulse/guidance.md'))).allowed).toBe(
      true,
    );
    expect((await judge('tool.execute.before-bash.json', shell('tee .pulse/guidance.md'))).allowed).toBe(
      false,
    );
  });

  it("runs pulse's tools by opencode's newer MCP names (`mcp__pulse__<tool>`) too, and no other server's", async () => {
    const named = (tool: string) => (capture: Capture) => {
      (capture.input as Record<string, unknown>).tool = tool;
    };
    const file = 'tool.execute.before-pulse_pulse_ack_replan.json';
    expect(await judge(file, named('mcp__pulse__pulse_ack_replan'))).toEqual({
      pulseTool: true,
      allowed: true,
    });
    for (const name of [
      'mcp__github__pulse_ack_replan',
      'mcp__pulse_pulse__ack_replan',
      'github_pulse_ack_replan',
    ])
      expect((await judge(file, named(name))).allowed, name).toBe(false);
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
