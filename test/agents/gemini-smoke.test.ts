import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PULSE_TOOLS } from '../../src/hooks/pulse-tools.js';
import { type RunningDaemon, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { readJsonLines } from '../support/files.js';
import { trackStarted } from '../support/started.js';
import { type GeminiHome, type GeminiOptions, type GeminiRun, makeGeminiHome, runGemini } from './gemini.js';
import { type FunctionCall, type ScriptedGemini, type Step, startScriptedGemini } from './gemini-model.js';

/*
 * The real Gemini CLI (0.61.0, `gemini -p … -o stream-json`) against a scripted Gemini API, with
 * pulse's real daemon as its MCP server and a recording hook of the test's own on every hook event
 * (it appends its stdin to a file and prints the answer the test chose). What it pins is written up
 * in FINDINGS-gemini.md. PULSE_CAPTURE_FIXTURES=1 writes the hook inputs to
 * test/fixtures/hooks/gemini-0.61.0/ again (then `npm run format`); otherwise a capture must have the
 * fixtures' shape, so a CLI upgrade that changes the input is seen here first.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/hooks/gemini-0.61.0/', import.meta.url));
const CAPTURE = process.env.PULSE_CAPTURE_FIXTURES === '1';

/** Every hook event Gemini CLI 0.61.0 knows (its `HookEventName`). */
const EVENTS = [
  'SessionStart',
  'SessionEnd',
  'BeforeAgent',
  'AfterAgent',
  'BeforeModel',
  'AfterModel',
  'BeforeToolSelection',
  'BeforeTool',
  'AfterTool',
  'PreCompress',
  'Notification',
] as const;
type HookEvent = (typeof EVENTS)[number];

type Input = Record<string, unknown> & { hook_event_name: string };

const started = trackStarted();
afterEach(() => started.cleanUp());

/** What the recording hook prints for one call: stdout, stderr, exit code. */
interface Answer {
  stdout?: unknown;
  stderr?: string;
  code?: number;
}

/**
 * The recording hook: a bash line (Gemini runs hook commands with `bash -c`) that appends its stdin
 * to `<dir>/<event>.jsonl` and, if the test left an answer for this call (`<event>.<n>`, the n-th
 * call) or for every call (`<event>.all`), prints it and exits with its code.
 */
const recordingCommand = (dir: string, event: string) =>
  [
    `d='${dir}'; e=${event}`,
    '{ cat; echo; } >> "$d/$e.jsonl"',
    'n=$(wc -l < "$d/$e.jsonl")',
    'a="$d/$e.$n"; [ -f "$a.out" ] || a="$d/$e.all"; [ -f "$a.out" ] || exit 0',
    'cat "$a.out"; cat "$a.err" >&2; exit "$(cat "$a.code")"',
  ].join('; ');

/** The flags, environment, time limit and abort signal of one run. */
type RunOptions = Pick<GeminiOptions, 'args' | 'env' | 'timeoutMs' | 'signal'>;

/** A project with pulse's daemon, the recording hook on every event, and the user's trust. */
interface Scene {
  project: string;
  daemon: RunningDaemon;
  hooksDir: string;
  home: GeminiHome;
  /** Leaves an answer for the `nth` call of `event` (1-based), or for every call. */
  answer(event: HookEvent, answer: Answer, nth?: number): Promise<void>;
  /** The inputs the recording hook got for one event, in order. */
  inputs(event: HookEvent): Promise<Input[]>;
  /** Runs `gemini -p` on a script in the project, by default with `--approval-mode yolo`. */
  run(
    steps: Step[],
    prompt: string,
    options?: RunOptions,
  ): Promise<{ run: GeminiRun; model: ScriptedGemini }>;
}

/** `.gemini/settings.json` of the project: the hooks, pulse's MCP server, and anything `extra` adds. */
const projectSettings = (
  hooksDir: string,
  pulse: Record<string, unknown>,
  extra: Record<string, unknown>,
) => ({
  hooks: Object.fromEntries(
    EVENTS.map((event) => [
      event,
      [{ hooks: [{ type: 'command', name: `record-${event}`, command: recordingCommand(hooksDir, event) }] }],
    ]),
  ),
  mcpServers: { pulse },
  ...extra,
});

const setUp = async ({
  mcp = { trust: true },
  settings = {},
  trusted = true,
}: {
  /** More keys of `mcpServers.pulse` beside its `httpUrl`. */
  mcp?: Record<string, unknown>;
  /** More keys of the project's `.gemini/settings.json`. */
  settings?: Record<string, unknown>;
  /** Whether the user trusted the folder (`~/.gemini/trustedFolders.json`). */
  trusted?: boolean;
} = {}): Promise<Scene> => {
  const project = await realpath(await tempProject('pulse-gemini-'));
  started.projects.push(project);
  execFileSync('git', ['init', '-q', project]);
  const daemon = await startDaemon(project);
  started.daemons.push(daemon);
  const hooksDir = await tempProject('pulse-gemini-hooks-');
  started.projects.push(hooksDir);
  await mkdir(join(project, '.gemini'));
  const settingsFile = join(project, '.gemini', 'settings.json');
  const pulse = { httpUrl: daemon.url, ...mcp };
  await writeFile(settingsFile, JSON.stringify(projectSettings(hooksDir, pulse, settings), null, 2));
  const home = await makeGeminiHome(trusted ? [project] : []);
  started.projects.push(home.home);
  return {
    project,
    daemon,
    hooksDir,
    home,
    async answer(event, { stdout, stderr = '', code = 0 }, nth) {
      const base = join(hooksDir, `${event}.${nth ?? 'all'}`);
      const out = stdout === undefined ? '' : typeof stdout === 'string' ? stdout : JSON.stringify(stdout);
      await writeFile(`${base}.out`, out);
      await writeFile(`${base}.err`, stderr);
      await writeFile(`${base}.code`, String(code));
    },
    inputs: (event) => readJsonLines<Input>(join(hooksDir, `${event}.jsonl`)),
    async run(steps, prompt, { args = ['--approval-mode', 'yolo'], ...rest } = {}) {
      const model = await startScriptedGemini(steps);
      started.streams.push({ close: () => void model.close() });
      const run = await runGemini({ cwd: project, home, baseUrl: model.baseUrl, prompt, args, ...rest });
      return { run, model };
    },
  };
};

const call = (name: string, args: Record<string, unknown> = {}): FunctionCall[] => [{ name, args }];

/** What a run printed, for an assertion's message. */
const context = (run: GeminiRun, model: ScriptedGemini) =>
  `gemini exited ${run.code} after ${model.turns().length} model requests\n${run.stdout}\n${run.stderr}`;

/** The `tool_result` events of stream-json, in order: status and output. */
const toolResults = (run: GeminiRun) =>
  run.events
    .filter((event) => event.type === 'tool_result')
    .map((event) => ({ status: event.status, output: event.output }));

/** Temp paths and ids replaced by fixed words, so a fixture reads the same on every machine and run. */
const sanitize = (input: Input, replacements: Array<[string, string]>): Input => {
  let text = JSON.stringify(input);
  for (const [from, to] of replacements) text = text.split(from).join(to);
  return JSON.parse(
    text
      .replace(/"timestamp":"[^"]+"/g, '"timestamp":"TIMESTAMP"')
      .replace(/session-\d{4}-\d\d-\d\dT\d\d-\d\d-[0-9a-f]+\.jsonl/g, 'session-DATE-SESSION.jsonl')
      .replace(/Process Group PGID: \d+/g, 'Process Group PGID: PGID')
      .replace(/session:[0-9a-f-]{36}/g, 'session:MCP_SESSION'),
  );
};

/** A fixture's name: the event and the tool (or the start's source, the end's reason, the stop's flag). */
const fixtureName = (input: Input): string => {
  const detail =
    input.tool_name ??
    input.source ??
    input.reason ??
    input.notification_type ??
    ('stop_hook_active' in input ? `stop_hook_active-${input.stop_hook_active}` : null);
  return detail === null
    ? `${input.hook_event_name}.json`
    : `${input.hook_event_name}-${String(detail)}.json`;
};

/** Each value replaced by its type, recursively: what must not change between a fixture and a new capture. */
const shape = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]));
  }
  return value === null ? 'null' : typeof value;
};

/** The first input of each fixture name, with the scene's temp paths and ids replaced. */
const fixtureSamples = (scene: Scene, session: string, inputs: Input[]): Map<string, Input> => {
  // The project's folder name also shows lower-cased (Gemini's temp dir) and in pulse's URL path.
  const replacements: Array<[string, string]> = [
    [scene.daemon.url, 'http://127.0.0.1:PORT/p/PROJECT-SLUG/mcp'],
    [scene.project, '/PROJECT'],
    [scene.home.home, '/HOME'],
    [scene.hooksDir, '/HOOKS'],
    [session, 'SESSION'],
    [basename(scene.project).toLowerCase(), 'PROJECT-NAME'],
  ];
  const samples = new Map<string, Input>();
  for (const input of inputs) {
    const name = fixtureName(input);
    if (!samples.has(name)) samples.set(name, sanitize(input, replacements));
  }
  return samples;
};

/** Writes the samples as fixtures under PULSE_CAPTURE_FIXTURES=1; either way each must have its fixture's shape. */
const keepFixtures = async (samples: Map<string, Input>) => {
  if (CAPTURE) {
    await mkdir(FIXTURES, { recursive: true });
    for (const [name, sample] of samples)
      await writeFile(join(FIXTURES, name), `${JSON.stringify(sample, null, 2)}\n`);
  }
  for (const [name, sample] of samples) {
    const fixture = JSON.parse(await readFile(join(FIXTURES, name), 'utf8'));
    expect(shape(sample), name).toEqual(shape(fixture));
  }
};

describe.skipIf(!process.env.PULSE_AGENT_SUITE)('Gemini CLI 0.61.0 with pulse as its MCP server', () => {
  it('gives every hook event its input, the MCP answer to AfterTool, and sends a held stop back as a user message', async () => {
    const scene = await setUp();
    await writeFile(join(scene.project, 'notes.txt'), 'notes\n');
    const plan = join(scene.project, '.pulse', 'plan.md');
    await scene.answer('AfterAgent', { stdout: { decision: 'deny', reason: 'pulse: stop held once.' } }, 1);
    await scene.answer('AfterAgent', { stdout: { decision: 'deny', reason: 'pulse: stop held twice.' } }, 2);
    const read = call('read_file', { file_path: 'notes.txt' });
    const steps: Step[] = [
      () => call('mcp_pulse_pulse_should_interrupt'),
      () => call('run_shell_command', { command: 'touch made', description: 'Create made' }),
      () => read,
      () => call('write_file', { file_path: plan, content: '# Plan\n\nv1\n' }),
      () => call('replace', { file_path: plan, instruction: 'Bump', old_string: 'v1', new_string: 'v2' }),
      () => call('glob', { pattern: '*.txt' }),
      () => call('grep_search', { pattern: 'notes' }),
      () => call('list_directory', { dir_path: '.' }),
      () => call('write_todos', { todos: [{ description: 'Replan', status: 'pending' }] }),
      () => call('read_mcp_resource', { uri: 'pulse://context/latest' }),
      () => call('mcp_pulse_pulse_ack_replan', { event_id: 'evt_none' }),
      () => 'Stopping.',
      () => read,
      () => 'Stopping again.',
      () => 'Stopping for good.',
    ];
    const { run, model } = await scene.run(steps, 'Work on the project.');
    const details = context(run, model);
    expect(run.code, details).toBe(0);
    expect([model.errors, model.overruns], details).toEqual([[], 0]);
    expect(existsSync(join(scene.project, 'made')), details).toBe(true);
    expect(await readFile(plan, 'utf8')).toBe('# Plan\n\nv2\n');

    const before = await scene.inputs('BeforeTool');
    expect(before.map((input) => input.tool_name)).toEqual([
      'mcp_pulse_pulse_should_interrupt',
      'run_shell_command',
      'read_file',
      'write_file',
      'replace',
      'glob',
      'grep_search',
      'list_directory',
      'write_todos',
      'read_mcp_resource',
      'mcp_pulse_pulse_ack_replan',
      'read_file',
    ]);
    // tool_input is the model's arguments as sent: the shell line, paths relative or absolute.
    expect(before[1]!.tool_input).toEqual({ command: 'touch made', description: 'Create made' });
    expect(before[2]!.tool_input).toEqual({ file_path: 'notes.txt' });
    expect(before[3]!.tool_input).toMatchObject({ file_path: plan });
    expect(before[0]!.mcp_context).toEqual({
      server_name: 'pulse',
      tool_name: 'pulse_should_interrupt',
      url: scene.daemon.url,
    });
    const after = await scene.inputs('AfterTool');
    expect(after.map((input) => input.tool_name)).toEqual(before.map((input) => input.tool_name));
    // pulse's answer, with the agent_id pulse ties sessions by, reaches AfterTool as the model's text.
    const checkIn = after[0]!.tool_response as { llmContent: Array<{ text: string }> };
    expect(checkIn.llmContent[0]!.text).toMatch(/"agent_id":"session:[0-9a-f-]+"/);

    const session = run.events.find((event) => event.type === 'init')?.session_id;
    const all = (await Promise.all(EVENTS.map((event) => scene.inputs(event)))).flat();
    for (const input of all) expect(input).toMatchObject({ session_id: session, cwd: scene.project });
    expect((await scene.inputs('SessionStart')).map((input) => input.source)).toEqual(['startup']);
    expect((await scene.inputs('SessionEnd')).map((input) => input.reason)).toEqual(['exit']);

    // A held stop: its reason is the next user message, BeforeAgent fires again with it as the
    // prompt, and stop_hook_active is true only when the model stops right after a hold: a tool
    // call in between (the read after the first hold) sets it back to false.
    const stops = await scene.inputs('AfterAgent');
    expect(stops.map((input) => [input.prompt_response, input.stop_hook_active])).toEqual([
      ['Stopping.', false],
      ['Stopping.\nStopping again.', false],
      ['Stopping.\nStopping again.\nStopping for good.', true],
    ]);
    expect((await scene.inputs('BeforeAgent')).map((input) => input.prompt)).toEqual([
      'Work on the project.',
      'pulse: stop held once.',
      'pulse: stop held twice.',
    ]);
    const afterHold = model.turns()[12]!.contents.at(-1);
    expect(afterHold).toEqual({ role: 'user', parts: [{ text: 'pulse: stop held once.' }] });
    expect(run.events.filter((event) => event.type === 'error').map((event) => event.message)).toEqual([
      'Agent execution blocked: pulse: stop held once.',
      'Agent execution blocked: pulse: stop held twice.',
    ]);

    const samples = fixtureSamples(scene, String(session), all);
    await keepFixtures(samples);
    // The Notification sample comes from the "ask" test below.
    expect((await readdir(FIXTURES)).sort()).toEqual(
      [...samples.keys(), 'Notification-ToolPermission.json'].sort(),
    );
  });

  it('blocks a tool call on decision deny, exit 2, any other non-zero exit with text, a missing hook; runs it otherwise', async () => {
    const scene = await setUp();
    // A second BeforeTool group, by regex matcher: a hook that is not executable, one that hangs.
    const settingsFile = join(scene.project, '.gemini', 'settings.json');
    const settings = JSON.parse(await readFile(settingsFile, 'utf8'));
    const notExecutable = join(scene.hooksDir, 'not-executable.sh');
    await writeFile(notExecutable, '#!/bin/sh\necho \'{"decision":"deny","reason":"never read"}\'\n');
    await chmod(notExecutable, 0o644);
    settings.hooks.BeforeTool.push(
      { matcher: '^glob$', hooks: [{ type: 'command', name: 'not-executable', command: notExecutable }] },
      {
        matcher: '^list_directory$',
        hooks: [{ type: 'command', name: 'hangs', command: 'sleep 5', timeout: 500 }],
      },
    );
    await writeFile(settingsFile, JSON.stringify(settings, null, 2));
    const cases: Array<[string, Answer]> = [
      ['deny', { stdout: { decision: 'deny', reason: 'pulse: a replan is pending.' } }],
      ['block', { stdout: { decision: 'block', reason: 'blocked by block.' } }],
      ['exit2', { stderr: 'exit 2 reason on stderr', code: 2 }],
      ['exit1-json', { stdout: { decision: 'deny', reason: 'denied with exit 1.' }, code: 1 }],
      ['exit3-text', { stdout: 'plain text, exit 3', code: 3 }],
      ['exit1-text', { stderr: 'plain text, exit 1', code: 1 }],
      ['not-json', { stdout: 'not json at all' }],
      ['broken-json', { stdout: '{"decision": "deny", ' }],
      [
        'claude-style',
        {
          stdout: {
            hookSpecificOutput: {
              hookEventName: 'BeforeTool',
              permissionDecision: 'deny',
              permissionDecisionReason: 'R',
            },
          },
        },
      ],
      ['no-reason', { stdout: { decision: 'deny' } }],
    ];
    for (const [index, [, answer]] of cases.entries()) await scene.answer('BeforeTool', answer, index + 1);
    const steps: Step[] = [
      ...cases.map(
        ([name]) =>
          () =>
            call('run_shell_command', { command: `touch ${name}` }),
      ),
      () => call('glob', { pattern: '*' }),
      () => call('list_directory', { dir_path: '.' }),
      () => 'Done.',
    ];
    const { run, model } = await scene.run(steps, 'Touch the files.');
    const details = context(run, model);
    expect(run.code, details).toBe(0);
    const made = cases.map(([name]) => [name, existsSync(join(scene.project, name))]);
    expect(made, details).toEqual([
      ['deny', false],
      ['block', false],
      ['exit2', false],
      ['exit1-json', false],
      ['exit3-text', false],
      ['exit1-text', true],
      ['not-json', true],
      ['broken-json', true],
      ['claude-style', true],
      ['no-reason', false],
    ]);
    // What the model reads for a blocked call, byte for byte: a functionResponse with `error`.
    const responses = model
      .turns()
      .slice(1, cases.length + 3)
      .map((body) => body.contents.at(-1)?.parts[0]?.functionResponse?.response);
    expect(responses[0]).toEqual({ error: 'Tool execution blocked: pulse: a replan is pending.' });
    expect(responses[1]).toEqual({ error: 'Tool execution blocked: blocked by block.' });
    expect(responses[2]).toEqual({ error: 'Tool execution blocked: exit 2 reason on stderr' });
    expect(responses[3]).toEqual({ error: 'Tool execution blocked: denied with exit 1.' });
    expect(responses[4]).toEqual({ error: 'Tool execution blocked: plain text, exit 3' });
    expect(responses[9]).toEqual({ error: 'Tool execution blocked: No reason provided' });
    // A hook that cannot run is a non-zero exit with text (bash's complaint): the call is blocked.
    expect(responses[10]).toEqual({
      error: `Tool execution blocked: bash: line 1: ${notExecutable}: Permission denied`,
    });
    // A hook past its timeout is killed and the call runs.
    expect(String(responses[11]?.output)).toMatch(/^Directory listing for /);
    expect(toolResults(run).map((result) => result.status)).toEqual([
      'error',
      'error',
      'error',
      'error',
      'error',
      'success',
      'success',
      'success',
      'success',
      'error',
      'error',
      'success',
    ]);
  });

  it('adds SessionStart and BeforeAgent context to the first user message and AfterTool context to the tool result, escaped', async () => {
    const scene = await setUp();
    const additional = (event: string, text: string): Answer => ({
      stdout: {
        systemMessage: `${event} says hi`,
        hookSpecificOutput: { hookEventName: event, additionalContext: text },
      },
    });
    await scene.answer('SessionStart', additional('SessionStart', 'start <context> & more'));
    await scene.answer('BeforeAgent', additional('BeforeAgent', 'prompt context'));
    await scene.answer('AfterTool', additional('AfterTool', 'tool context'));
    const { run, model } = await scene.run(
      [() => call('run_shell_command', { command: 'echo hi' }), () => 'Done.'],
      'Say hi.',
    );
    expect(run.code, context(run, model)).toBe(0);
    const [first, second] = model.turns();
    expect(first?.contents).toHaveLength(1);
    expect(first?.contents[0]?.parts.slice(1)).toEqual([
      { text: '<hook_context>start &lt;context&gt; & more</hook_context>\n\nSay hi.' },
      { text: '<hook_context>prompt context</hook_context>' },
    ]);
    // Added once: the second request carries the same first message as history, nothing more.
    expect(second?.contents[0]).toEqual(first?.contents[0]);
    expect(second?.contents.at(-1)?.parts[0]?.functionResponse?.response.output).toMatch(
      /^<untrusted_context>\nOutput: hi\nProcess Group PGID: \d+\n<\/untrusted_context>\n\n<hook_context>tool context<\/hook_context>$/,
    );
    // systemMessage reaches only the terminal (stderr), never the model or stream-json.
    expect(run.stderr).toContain('Hook system message: SessionStart says hi');
    expect(run.stdout).not.toContain('says hi');
    expect(JSON.stringify(model.turns())).not.toContain('says hi');
  });

  it("runs exactly pulse's three tools unasked in the default approval mode once the user allows them in tools.allowed", async () => {
    const allowed = PULSE_TOOLS.map((tool) => `mcp_pulse_${tool}`);
    const steps: Step[] = [
      () => call('mcp_pulse_pulse_should_interrupt'),
      () => call('run_shell_command', { command: 'touch made' }),
      () => 'Done.',
    ];
    const withAllowed = await setUp({ mcp: {}, settings: { tools: { allowed } } });
    const granted = await withAllowed.run(steps, 'Check in, then touch made.', { args: [] });
    const names = (scene: { model: ScriptedGemini }) =>
      (scene.model.turns()[0]?.tools ?? [])
        .flatMap((tool) => tool.functionDeclarations ?? [])
        .map((fn) => fn.name);
    expect(names(granted)).toEqual(expect.arrayContaining(allowed));
    expect(names(granted)).not.toContain('run_shell_command');
    expect(toolResults(granted.run)).toEqual([
      { status: 'success', output: expect.stringContaining('"needs_replan":false') },
      {
        status: 'error',
        output: expect.stringMatching(/^Tool "run_shell_command" not found\./),
      },
    ]);
    expect(existsSync(join(withAllowed.project, 'made'))).toBe(false);
    // A call of a tool that is not offered never reaches BeforeTool.
    expect((await withAllowed.inputs('BeforeTool')).map((input) => input.tool_name)).toEqual([
      'mcp_pulse_pulse_should_interrupt',
    ]);

    // Without the grant (and without `trust`), headless leaves pulse's tools out altogether.
    const without = await setUp({ mcp: {} });
    const refused = await without.run([steps[0]!, () => 'Done.'], 'Check in.', { args: [] });
    expect(names(refused)).not.toContain('mcp_pulse_pulse_should_interrupt');
    expect(toolResults(refused.run)).toEqual([
      {
        status: 'error',
        output: expect.stringMatching(/^Tool "mcp_pulse_pulse_should_interrupt" not found\./),
      },
    ]);
  });

  it("runs an untrusted folder under --skip-trust without the project's hooks and MCP server, and with them under GEMINI_CLI_TRUST_WORKSPACE", async () => {
    const scene = await setUp({ trusted: false });
    const steps: Step[] = [() => call('mcp_pulse_pulse_should_interrupt'), () => 'Done.'];
    const skipped = await scene.run(steps, 'Check in.', {
      args: ['--approval-mode', 'yolo', '--skip-trust'],
    });
    expect(skipped.run.code, context(skipped.run, skipped.model)).toBe(0);
    expect(toolResults(skipped.run)).toEqual([
      {
        status: 'error',
        output: expect.stringMatching(/^Tool "mcp_pulse_pulse_should_interrupt" not found\./),
      },
    ]);
    expect(await scene.inputs('SessionStart')).toEqual([]);

    const { run, model } = await scene.run(steps, 'Check in.', {
      env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    });
    expect(run.code, context(run, model)).toBe(0);
    expect(toolResults(run)).toEqual([
      { status: 'success', output: expect.stringContaining('"needs_replan":false') },
    ]);
    expect((await scene.inputs('SessionStart')).map((input) => input.source)).toEqual(['startup']);
  });

  it("keeps pulse's tools in plan mode (the model's enter_plan_mode) under tools.allowed, but not under trust", async () => {
    const allowed = PULSE_TOOLS.map((tool) => `mcp_pulse_${tool}`);
    const steps: Step[] = [
      () => call('enter_plan_mode', { reason: 'Replan' }),
      () => call('mcp_pulse_pulse_should_interrupt'),
      () => call('write_file', { file_path: '.pulse/plan.md', content: '# Plan\n' }),
      () => 'Planned.',
    ];
    const listed = await setUp({ mcp: {}, settings: { tools: { allowed } } });
    const kept = await listed.run(steps, 'Plan.');
    const trusted = await setUp({ mcp: { trust: true } });
    const dropped = await trusted.run(steps, 'Plan.');
    const planDenied = expect.stringMatching(/^Tool execution denied by policy\. You are in Plan Mode/);
    expect(toolResults(kept.run)).toEqual([
      { status: 'success', output: 'Switching to Plan mode: Replan' },
      { status: 'success', output: expect.stringContaining('"needs_replan":false') },
      // Plan mode writes only to Gemini's own plans folder, not .pulse/plan.md.
      { status: 'error', output: planDenied },
    ]);
    expect(toolResults(dropped.run)).toEqual([
      { status: 'success', output: 'Switching to Plan mode: Replan' },
      {
        status: 'error',
        output: expect.stringMatching(/^Tool "mcp_pulse_pulse_should_interrupt" not found\./),
      },
      { status: 'error', output: planDenied },
    ]);
  });

  it('stops at a confirmation nobody can give when a BeforeTool hook answers "ask" headless', async () => {
    const scene = await setUp();
    await scene.answer('BeforeTool', { stdout: { decision: 'ask', reason: 'Ask the user.' } });
    const stop = new AbortController();
    const running = scene.run(
      [() => call('run_shell_command', { command: 'touch asked' }), () => 'Done.'],
      'Touch asked.',
      { signal: stop.signal },
    );
    // The one trace: a Notification hook call about the tool permission; then the CLI waits.
    const notices = await waitUntil(
      async () => {
        const inputs = await scene.inputs('Notification');
        return inputs.length > 0 && inputs;
      },
      { timeoutMs: 60_000, describe: () => 'the Notification hook' },
    );
    stop.abort();
    const { run, model } = await running;
    expect(run.signal, 'still waiting when the test killed it').toBe('SIGKILL');
    expect(model.turns()).toHaveLength(1);
    expect(toolResults(run)).toEqual([]);
    expect(existsSync(join(scene.project, 'asked'))).toBe(false);
    expect(notices).toMatchObject([{ notification_type: 'ToolPermission' }]);
    await keepFixtures(fixtureSamples(scene, String(notices[0]!.session_id), notices));
  });
});
