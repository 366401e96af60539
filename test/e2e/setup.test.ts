import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { access, mkdir, readdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { afterEach, describe, expect, it } from 'vitest';
import type { SetupResult } from '../../src/commands/setup.js';
import { type HookAgent, hookEvents } from '../../src/hooks/events.js';
import { AGENT_RULE, AGENT_RULE_LINES } from '../../src/mcp/agent-rule.js';
import { SETUP_AGENTS } from '../../src/setup/agent-names.js';
import { projectId } from '../../src/store/project-id.js';
import {
  BIN,
  connectClient,
  type RunningDaemon,
  removeProject,
  runCli,
  startDaemon,
  tempProject,
} from '../support/daemon.js';

// `pulse setup` run as a user runs it: the built CLI, in temp project folders, reading back the
// files an agent would read.

/** The project's own URL on the default port, as `pulse setup` writes it. */
const URL_8765 = (dir: string) => `http://127.0.0.1:8765/p/${projectId(dir)}/mcp`;
const URL_9000 = 'http://127.0.0.1:9000/mcp';

/** A loopback port nothing listens on (one the kernel just handed out and took back), so a pulse running on 8765 does not answer. */
const unusedPort = async (): Promise<number> => {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
};

type Agent = 'claude' | 'codex' | 'gemini' | 'copilot' | 'opencode' | 'cursor' | 'vscode';

/** The files each agent reads, as its documentation names them. */
const FILES: Record<Agent, { mcp: string; hooks: string | null; instructions: string }> = {
  claude: { mcp: '.mcp.json', hooks: '.claude/settings.local.json', instructions: 'CLAUDE.md' },
  codex: { mcp: '.codex/config.toml', hooks: '.codex/hooks.json', instructions: 'AGENTS.md' },
  // Gemini CLI keeps its servers and hooks in one file.
  gemini: { mcp: '.gemini/settings.json', hooks: '.gemini/settings.json', instructions: 'GEMINI.md' },
  opencode: { mcp: 'opencode.json', hooks: '.opencode/plugins/pulse.js', instructions: 'AGENTS.md' },
  cursor: { mcp: '.cursor/mcp.json', hooks: '.cursor/hooks.json', instructions: '.cursor/rules/pulse.mdc' },
  vscode: { mcp: '.vscode/mcp.json', hooks: null, instructions: '.github/copilot-instructions.md' },
  copilot: {
    mcp: '.mcp.json',
    hooks: '.github/hooks/pulse.json',
    instructions: '.github/copilot-instructions.md',
  },
};
const AGENTS = Object.keys(FILES) as Agent[];

const projects: string[] = [];
const daemons: RunningDaemon[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.kill9()));
  await Promise.all(projects.splice(0).map(removeProject));
});

const project = async () => {
  const dir = await tempProject('pulse-setup-');
  projects.push(dir);
  return dir;
};

const put = async (dir: string, file: string, text: string) => {
  await mkdir(dirname(join(dir, file)), { recursive: true });
  await writeFile(join(dir, file), text);
};

const read = (dir: string, file: string) => readFile(join(dir, file), 'utf8');

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Every file under `dir`, path → bytes: what a run may not change. */
const snapshot = async (dir: string): Promise<Record<string, string>> => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: Record<string, string> = {};
  for (const entry of entries.filter((e) => e.isFile())) {
    const path = join(entry.parentPath, entry.name);
    files[relative(dir, path)] = (await readFile(path)).toString('base64');
  }
  return files;
};

const setup = (agent: string, dir: string, ...args: string[]) => runCli(['setup', agent, '-p', dir, ...args]);

/** The servers object of an agent's JSON MCP file. */
const serversOf = (agent: Agent, json: Record<string, Record<string, { url?: string }>>) =>
  json[agent === 'vscode' ? 'servers' : agent === 'opencode' ? 'mcp' : 'mcpServers']!;

/** The `const PULSE = {…}` of pulse's opencode plugin: the daemon's port and the project it posts for. */
const pluginSetup = async (dir: string) =>
  JSON.parse(/^const PULSE = (.*);$/m.exec(await read(dir, FILES.opencode.hooks!))![1]!) as {
    port: number;
    project: string;
  };

/** The url of the `pulse` server in the agent's MCP file (for Codex, the table's text is checked). */
const pulseUrl = async (agent: Agent, dir: string): Promise<string | undefined> => {
  const text = await read(dir, FILES[agent].mcp);
  if (agent === 'codex') return /\[mcp_servers\.pulse\]\nurl = "([^"]*)"/.exec(text)?.[1];
  const json = JSON.parse(text);
  if (agent === 'gemini') return json.mcpServers.pulse?.httpUrl;
  return serversOf(agent, json).pulse?.url;
};

interface Handler {
  type?: string;
  command?: string;
  /** Copilot's shell line, or the program it runs with no shell. */
  bash?: string;
  exec?: string;
  args?: string[];
  matcher?: string;
  url?: string;
}

/** The shell line a command handler runs (Copilot's `exec` and `args` as the line that runs the same). */
const lineOf = (handler: Handler): string | undefined => {
  if (handler.exec === undefined) return handler.command ?? handler.bash;
  const [script, ...rest] = handler.args ?? [];
  return [`"${handler.exec}"`, `"${script}"`, ...rest].join(' ');
};

/** The hook handlers per event in a hooks file: matcher groups (Claude Code, Codex) or a flat list (Cursor, Copilot). */
const hookHandlers = (agent: HookAgent, json: { hooks: Record<string, unknown[]> }) =>
  Object.fromEntries(
    Object.entries(json.hooks).map(([event, list]) => [
      event,
      agent === 'cursor' || agent === 'copilot'
        ? (list as Handler[])
        : (list as Array<{ hooks: Handler[] }>).flatMap((group) => group.hooks),
    ]),
  ) as Record<string, Handler[]>;

/** What each handler runs or posts to. */
const hookCommands = (agent: HookAgent, json: { hooks: Record<string, unknown[]> }) =>
  Object.fromEntries(
    Object.entries(hookHandlers(agent, json)).map(([event, list]) => [
      event,
      list.map((handler) => lineOf(handler) ?? handler.url ?? ''),
    ]),
  ) as Record<string, string[]>;

const pulseHooks = (commands: string[]) =>
  commands.filter((command) => /\/hook\/\w+\/\w+\?project=| hook \w+ --event \w+$/.test(command));

/** Whether every key and array element of `original` is still in `merged` (arrays may grow at the end). */
const keeps = (original: unknown, merged: unknown): boolean => {
  if (Array.isArray(original)) {
    return Array.isArray(merged) && original.every((item, i) => keeps(item, merged[i]));
  }
  if (typeof original === 'object' && original !== null) {
    if (typeof merged !== 'object' || merged === null) return false;
    return Object.entries(original).every(([key, value]) =>
      keeps(value, (merged as Record<string, unknown>)[key]),
    );
  }
  return original === merged;
};

/** A project with the user's own entries in each of the agent's files. */
const USER_FILES: Record<Agent, Record<string, string>> = {
  claude: {
    '.mcp.json':
      '{\n    "mcpServers": {\n        "other": { "command": "other-server", "args": ["--x"] }\n    }\n}\n',
    '.claude/settings.local.json': JSON.stringify({
      permissions: { allow: ['Bash(ls)'] },
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] }],
        Notification: [{ hooks: [{ type: 'command', command: 'notify-send hi' }] }],
      },
    }),
    'CLAUDE.md': '# My project\n\nUse tabs.\n',
  },
  codex: {
    '.codex/config.toml':
      '# my config\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\nargs = ["--x"]\n\n[features]\nweb_search = true\n',
    '.codex/hooks.json': JSON.stringify({
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo done', timeout: 3 }] }] },
    }),
    'AGENTS.md': '# Agents\n\nRun npm test before committing.',
  },
  gemini: {
    '.gemini/settings.json': JSON.stringify({
      mcpServers: { other: { command: 'other-server' } },
      tools: { allowed: ['run_shell_command(git status)'] },
      hooks: { BeforeTool: [{ matcher: 'write_file', hooks: [{ type: 'command', command: 'echo mine' }] }] },
    }),
    'GEMINI.md': '# My project\n\nUse tabs.\n',
  },
  opencode: {
    'opencode.json': JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      model: 'anthropic/claude-sonnet-4-5',
      mcp: { other: { type: 'local', command: ['other-server', '--x'] } },
      permission: { bash: 'ask' },
    }),
    'AGENTS.md': '# Agents\n\nRun npm test before committing.\n',
  },
  cursor: {
    '.cursor/mcp.json': JSON.stringify({ mcpServers: { other: { url: 'http://127.0.0.1:7000/mcp' } } }),
    '.cursor/hooks.json': JSON.stringify({
      version: 1,
      hooks: { beforeShellExecution: [{ command: './check.sh' }], afterFileEdit: [{ command: 'fmt' }] },
    }),
    '.cursor/rules/pulse.mdc': '---\ndescription: mine\nalwaysApply: true\n---\n\nMy own words.\n',
  },
  vscode: {
    '.vscode/mcp.json': JSON.stringify(
      { inputs: [], servers: { other: { type: 'stdio', command: 'x' } } },
      null,
      '\t',
    ),
    '.github/copilot-instructions.md': 'Answer in French.\n',
  },
  copilot: {
    '.mcp.json': JSON.stringify({ mcpServers: { other: { type: 'local', command: 'x', tools: ['*'] } } }),
    '.github/hooks/pulse.json': JSON.stringify({
      version: 1,
      hooks: {
        preToolUse: [{ type: 'command', bash: './check.sh', timeoutSec: 5 }],
        permissionRequest: [{ type: 'command', matcher: 'bash', bash: './ask.sh' }],
      },
    }),
    '.github/copilot-instructions.md': 'Answer in French.\n',
  },
};

/** A `pulse` server of the user's own, at port 9000, in each agent's MCP file. */
const CONFLICTING_MCP: Record<Agent, string> = {
  claude: JSON.stringify({ mcpServers: { pulse: { type: 'http', url: URL_9000 }, other: { command: 'x' } } }),
  codex: `[mcp_servers.pulse]\nurl = "${URL_9000}"\nstartup_timeout_sec = 5\n\n# the other one\n[mcp_servers.other]\ncommand = "x"\n`,
  gemini: JSON.stringify({ mcpServers: { pulse: { httpUrl: URL_9000 }, other: { command: 'x' } } }),
  opencode: JSON.stringify({ mcp: { pulse: { type: 'remote', url: URL_9000 }, other: { command: 'x' } } }),
  cursor: JSON.stringify({ mcpServers: { pulse: { url: URL_9000 }, other: { command: 'x' } } }),
  vscode: JSON.stringify({ servers: { pulse: { type: 'http', url: URL_9000 }, other: { command: 'x' } } }),
  copilot: JSON.stringify({
    mcpServers: { pulse: { type: 'http', url: URL_9000 }, other: { command: 'x' } },
  }),
};

describe.each(AGENTS)('pulse setup %s --write', (agent) => {
  const files = FILES[agent];

  it('creates valid files in an empty project: the server, every hook event once, the rule', async () => {
    const dir = await project();
    const { code, stdout } = await setup(agent, dir, '--write');
    expect(code, stdout).toBe(0);
    expect(await pulseUrl(agent, dir)).toBe(URL_8765(dir));
    if (agent !== 'codex') expect(JSON.parse(await read(dir, files.mcp))).toBeTypeOf('object');
    for (const file of Object.values(files).filter((f) => f !== null))
      expect(stdout).toContain(`created   ${file}`);
    if (agent === 'opencode') {
      expect(await read(dir, files.hooks!)).toMatch(
        /^\/\/ pulse-agent \S+ opencode plugin, written by `pulse setup opencode`/,
      );
      expect(await pluginSetup(dir)).toEqual({
        port: 8765,
        project: dir,
        server: 'pulse',
        pulse: expect.any(String),
      });
    } else if (files.hooks !== null) {
      const commands = hookCommands(agent as HookAgent, JSON.parse(await read(dir, files.hooks)));
      // Claude Code calls no HTTP hook at SessionStart: its first prompt's hook tells the same.
      const events = hookEvents(agent as HookAgent).filter((e) => agent !== 'claude' || e !== 'SessionStart');
      // Copilot's permission hook answers Copilot itself, not through the daemon (below).
      const { permissionRequest, ...routed } = commands;
      expect(Object.keys(commands)).toEqual(agent === 'copilot' ? [...events, 'permissionRequest'] : events);
      expect(permissionRequest, 'only Copilot gets a permission hook').toEqual(
        agent === 'copilot' ? [`echo '{"behavior":"allow"}'`] : undefined,
      );
      for (const [event, list] of Object.entries(routed)) {
        expect(list).toHaveLength(1);
        const route = `http://127.0.0.1:8765/hook/${agent}/${event}?project=${encodeURIComponent(dir)}`;
        // Claude Code posts to the route itself; Codex and Cursor run curl with the same url.
        if (agent === 'claude') expect(list[0]).toBe(route);
        else expect(list[0]).toMatch(new RegExp(`^o=\\$\\(curl .*'${route.replaceAll('?', '\\?')}'`));
      }
    }
    const instructions = await read(dir, files.instructions);
    expect(instructions).toContain(`<!-- pulse:begin -->\n## pulse\n\n${AGENT_RULE_LINES.join('\n')}\n`);
    expect(instructions.trimEnd().endsWith('<!-- pulse:end -->')).toBe(true);
    if (agent === 'cursor') expect(instructions).toMatch(/^---\ndescription: .+\nalwaysApply: true\n---\n/);
    expect(await exists(join(dir, '.vscode', 'hooks.json'))).toBe(false);
  });

  it("keeps the user's own entries, backs their files up, adds ours; a second run changes nothing", async () => {
    const dir = await project();
    const mine = USER_FILES[agent];
    for (const [file, text] of Object.entries(mine)) await put(dir, file, text);
    const first = await setup(agent, dir, '--write');
    expect(first.code, first.stdout).toBe(0);
    for (const [file, text] of Object.entries(mine)) {
      expect(await read(dir, `.pulse/backups/${file}.pulse-backup`)).toBe(text);
      expect(first.stdout).toContain(
        `changed   ${file} (backup: ${join(dir, '.pulse', 'backups', file)}.pulse-backup)`,
      );
      const merged = await read(dir, file);
      if (file.endsWith('.json')) expect(keeps(JSON.parse(text), JSON.parse(merged))).toBe(true);
      else expect(merged.startsWith(text)).toBe(true);
    }
    expect(await pulseUrl(agent, dir)).toBe(URL_8765(dir));
    if (agent === 'opencode') expect(await pluginSetup(dir)).toMatchObject({ port: 8765, project: dir });
    else if (files.hooks !== null) {
      const commands = hookCommands(agent as HookAgent, JSON.parse(await read(dir, files.hooks)));
      for (const event of hookEvents(agent as HookAgent).filter(
        (e) => agent !== 'claude' || e !== 'SessionStart',
      ))
        expect(pulseHooks(commands[event]!)).toHaveLength(1);
    }
    if (agent === 'claude') expect(await read(dir, files.mcp)).toMatch(/^\{\n {4}"mcpServers"/);

    const before = await snapshot(dir);
    const second = await setup(agent, dir, '--write');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Already set up');
    expect(second.stdout).not.toMatch(/created|changed {3}/);
    expect(await snapshot(dir)).toEqual(before);
  });

  it('moves an entry for the same port written before one daemon served several projects to the project’s URL, without --force', async () => {
    const dir = await project();
    const legacy = CONFLICTING_MCP[agent].replaceAll(URL_9000, 'http://127.0.0.1:8765/mcp');
    await put(dir, files.mcp, legacy);
    const moved = await setup(agent, dir, '--write');
    expect(moved.code, moved.stdout).toBe(0);
    expect(moved.stdout).toContain('replaced the "pulse" MCP server at http://127.0.0.1:8765/mcp');
    expect(await pulseUrl(agent, dir)).toBe(URL_8765(dir));
  });

  it("reports a 'pulse' server of the user's pointing elsewhere, writes nothing, and replaces it with --force", async () => {
    const dir = await project();
    await put(dir, files.mcp, CONFLICTING_MCP[agent]);
    const before = await snapshot(dir);
    const refused = await setup(agent, dir, '--write');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      `conflict     ${files.mcp}: already has a "pulse" MCP server at ${URL_9000}`,
    );
    expect(refused.stdout).toContain(`pulse setup ${agent} -p ${dir} --write --force`);
    expect(refused.stdout).toContain('--port 9000');
    expect(refused.stdout).toContain('Nothing written');
    expect(await snapshot(dir)).toEqual(before);

    const forced = await setup(agent, dir, '--write', '--force');
    expect(forced.code, forced.stdout).toBe(0);
    expect(forced.stdout).toContain(`replaced the "pulse" MCP server at ${URL_9000}`);
    expect(await pulseUrl(agent, dir)).toBe(URL_8765(dir));
    expect(await read(dir, `.pulse/backups/${files.mcp}.pulse-backup`)).toBe(CONFLICTING_MCP[agent]);
    const merged = await read(dir, files.mcp);
    if (agent === 'codex') {
      expect(merged).toBe(
        `[mcp_servers.pulse]\nurl = "${URL_8765(dir)}"\ndefault_tools_approval_mode = "approve"\n\n# the other one\n[mcp_servers.other]\ncommand = "x"\n`,
      );
    } else {
      expect(serversOf(agent, JSON.parse(merged)).other).toEqual({ command: 'x' });
    }
  });

  it('refuses a target that is not valid JSON, naming it, and writes no file at all', async () => {
    const dir = await project();
    // Comments are fine (VS Code allows them in mcp.json); an object left open is not.
    const broken = agent === 'codex' ? '.codex/hooks.json' : files.mcp;
    await put(dir, broken, agent === 'vscode' ? '{\n  // mine\n  "servers": {}\n' : '{"hooks": {');
    const before = await snapshot(dir);
    const { code, stdout } = await setup(agent, dir, '--write');
    expect(code).toBe(1);
    expect(stdout).toContain(`cannot edit  ${broken}: is not valid JSON`);
    expect(stdout).toContain('Nothing written');
    expect(await snapshot(dir)).toEqual(before);
  });
});

/** A tool call each agent's PreToolUse-style hook gets that writes outside the plan, as its JSON. */
const WRITE_CALL: Record<
  Exclude<HookAgent, 'opencode'>,
  { event: string; input: (dir: string) => Record<string, unknown> }
> = {
  copilot: {
    event: 'preToolUse',
    input: (dir) => ({
      sessionId: 's',
      timestamp: 1,
      cwd: dir,
      toolName: 'bash',
      toolArgs: { command: 'rm -rf src' },
    }),
  },
  claude: {
    event: 'PreToolUse',
    input: (dir) => ({
      session_id: 's',
      cwd: dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf src' },
    }),
  },
  codex: {
    event: 'PreToolUse',
    input: (dir) => ({
      session_id: 's',
      turn_id: 't',
      cwd: dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf src' },
    }),
  },
  gemini: {
    event: 'BeforeTool',
    input: (dir) => ({
      session_id: 's',
      cwd: dir,
      hook_event_name: 'BeforeTool',
      tool_name: 'run_shell_command',
      tool_input: { command: 'rm -rf src' },
    }),
  },
  cursor: {
    event: 'beforeShellExecution',
    input: (dir) => ({
      conversation_id: 'c',
      hook_event_name: 'beforeShellExecution',
      workspace_roots: [dir],
      command: 'rm -rf src',
      cwd: dir,
    }),
  },
  vscode: {
    event: 'PreToolUse',
    input: (dir) => ({
      sessionId: 's',
      cwd: dir,
      hookEventName: 'PreToolUse',
      tool_name: 'run_in_terminal',
      tool_input: { command: 'rm -rf src' },
    }),
  },
};

/** Whether an agent's answer holds the call, naming `eventId`. */
const holds = (agent: Exclude<HookAgent, 'opencode'>, answer: Record<string, unknown>, eventId: string) => {
  if (agent === 'gemini') return answer.decision === 'deny' && String(answer.reason).includes(eventId);
  if (agent === 'copilot')
    return answer.permissionDecision === 'deny' && String(answer.permissionDecisionReason).includes(eventId);
  return JSON.stringify(agent === 'cursor' ? answer.agent_message : answer.hookSpecificOutput).includes(
    eventId,
  );
};

const TRANSPORTS: Array<[Exclude<HookAgent, 'opencode'>, 'http' | 'curl' | 'node']> = [
  ['claude', 'http'],
  ['claude', 'curl'],
  ['claude', 'node'],
  ['codex', 'curl'],
  ['codex', 'node'],
  ['gemini', 'curl'],
  ['gemini', 'node'],
  ['cursor', 'curl'],
  ['cursor', 'node'],
  ['copilot', 'curl'],
  ['copilot', 'node'],
];

describe('pulse setup vscode --write on a commented mcp.json', () => {
  it('adds the pulse server in place, keeping the comments, the compact entry and the trailing comma', async () => {
    const dir = await project();
    const mine = '{\n  // GitHub first\n  "servers": {\n    "github": {"command": "gh-mcp"},\n  },\n}\n';
    await put(dir, '.vscode/mcp.json', mine);
    const { code, stdout } = await setup('vscode', dir, '--write');
    expect(code, stdout).toBe(0);
    expect(await read(dir, '.vscode/mcp.json')).toBe(
      `{\n  // GitHub first\n  "servers": {\n    "github": {"command": "gh-mcp"},\n    "pulse": {\n      "type": "http",\n      "url": "${URL_8765(dir)}"\n    },\n  },\n}\n`,
    );
    expect(await read(dir, '.pulse/backups/.vscode/mcp.json.pulse-backup')).toBe(mine);
  });
});

describe.each(TRANSPORTS)('the %s hooks pulse setup writes with --hooks %s', (agent, transport) => {
  /** The one handler of the write call's event, as written. */
  const handlerFor = async (dir: string) =>
    hookHandlers(agent, JSON.parse(await read(dir, FILES[agent].hooks!)))[WRITE_CALL[agent].event]![0]!;

  /** Runs one handler as the agent does: posts the JSON to its url, or runs its command through a shell. */
  const run = async (handler: Handler, dir: string, input: string) => {
    if (handler.type === 'http') {
      const response = await fetch(handler.url!, {
        method: 'POST',
        body: input,
        headers: { 'content-type': 'application/json' },
      }).catch(() => null);
      return { code: 0, stdout: response === null ? '' : await response.text(), stderr: '' };
    }
    return sh(lineOf(handler)!, dir, input);
  };

  it('hold a write while a replan is pending, through the daemon on the port they were set up for', async () => {
    const dir = await project();
    const daemon = await startDaemon(dir);
    daemons.push(daemon);
    const setUp = await setup(agent, dir, '--write', '--port', String(daemon.port), '--hooks', transport);
    expect(setUp.code, setUp.stdout).toBe(0);
    await writeFile(join(dir, '.pulse', 'guidance.md'), '# Guidance\n\nStop deleting things.\n');
    const client = await connectClient(daemon.url);
    const { structuredContent } = await client.callTool({ name: 'pulse_should_interrupt', arguments: {} });
    await client.close();
    const eventId = (structuredContent as { pending_replan_event_id: string }).pending_replan_event_id;
    expect(eventId).toMatch(/^evt_/);

    const { code, stdout, stderr } = await run(
      await handlerFor(dir),
      dir,
      JSON.stringify(WRITE_CALL[agent].input(dir)),
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(holds(agent, JSON.parse(stdout), eventId), stdout).toBe(true);
  });

  it.skipIf(transport === 'http')(
    'run as written with stdin {} and no daemon, and let the agent go on (exit 0) with one warning',
    async () => {
      const dir = await project();
      const port = await unusedPort();
      await setup(agent, dir, '--write', '--hooks', transport, '--port', String(port));
      const handlers = hookHandlers(agent, JSON.parse(await read(dir, FILES[agent].hooks!)));
      for (const event of hookEvents(agent)) {
        const { code, stdout, stderr } = await sh(lineOf(handlers[event]![0]!)!, dir, '{}');
        expect(code, `${event}: ${stderr}`).toBe(0);
        const answer = JSON.parse(stdout);
        const line = stderr.trim().split('\n');
        expect(line, event).toEqual([
          expect.stringMatching(
            transport === 'curl'
              ? new RegExp(
                  `^pulse: the daemon is not running at 127\\.0\\.0\\.1:${port} for ${dir}; not enforcing replans\\. Start it with: pulse start -p ${dir} --port ${port}$`,
                )
              : /^pulse: daemon not reachable for /,
          ),
        ]);
        // Codex shows no hook's stderr: Claude Code and Codex are told in a systemMessage too, Copilot in a progress line.
        if (transport === 'curl' && agent === 'copilot')
          expect(answer, event).toEqual({ type: 'progress', message: line[0] });
        else if (transport === 'curl' && agent !== 'cursor')
          expect(answer, event).toEqual({ systemMessage: line[0] });
        else expect(answer, event).toBeTypeOf('object');
      }
    },
  );

  it.skipIf(transport !== 'node')(
    'name this node and the pulse bin, which start from that command line',
    async () => {
      const dir = await project();
      await setup(agent, dir, '--write', '--hooks', 'node');
      const handler = await handlerFor(dir);
      // Copilot runs the program itself, with no shell in between: on Windows too.
      if (agent === 'copilot')
        expect(handler).toMatchObject({
          exec: process.execPath,
          args: [BIN, 'hook', 'copilot', '--event', 'preToolUse'],
        });
      const command = lineOf(handler)!;
      const [, node, cli] = /^"(.+)" "(.+)" hook /.exec(command)!;
      expect(node).toBe(process.execPath);
      expect(cli).toBe(BIN);
      const prefix = command.slice(0, command.indexOf(' hook '));
      const version = await sh(`${prefix} --version`, dir);
      expect(version.code).toBe(0);
      expect(version.stdout).toMatch(/^pulse-agent \d+\.\d+\.\d+/);
    },
  );
});

describe('pulse setup gemini --write', () => {
  it("writes pulse's server with $PULSE_TOKEN, allows exactly its three tools, and names each hook in milliseconds, in place in a commented file", async () => {
    const dir = await project();
    const mine =
      '{\n  // my model\n  "model": {"name": "gemini-2.5-pro"},\n  "tools": {\n    "allowed": ["run_shell_command(git status)"]\n  }\n}\n';
    await put(dir, '.gemini/settings.json', mine);
    // Gemini's own home, empty: no folder trusted yet.
    const home = await project();
    const { code, stdout } = await runCli(['setup', 'gemini', '-p', dir, '--write'], {
      env: { GEMINI_CLI_HOME: home },
    });
    expect(code, stdout).toBe(0);
    const text = await read(dir, '.gemini/settings.json');
    expect(text.startsWith('{\n  // my model\n  "model": {"name": "gemini-2.5-pro"},\n')).toBe(true);
    expect(await read(dir, '.pulse/backups/.gemini/settings.json.pulse-backup')).toBe(mine);
    // Its server and its hooks share the file: one line for it, one backup, one write.
    expect(stdout.split('\n').filter((line) => line.includes('   .gemini/settings.json'))).toEqual([
      `  changed   .gemini/settings.json (backup: ${join(dir, '.pulse', 'backups', '.gemini', 'settings.json')}.pulse-backup)`,
    ]);
    expect(await readdir(join(dir, '.pulse', 'backups', '.gemini'))).toEqual(['settings.json.pulse-backup']);
    const settings = JSON.parse(text.replace('  // my model\n', ''));
    expect(settings.mcpServers).toEqual({
      pulse: { httpUrl: URL_8765(dir), headers: { Authorization: 'Bearer $PULSE_TOKEN' } },
    });
    expect(settings.tools.allowed).toEqual([
      'run_shell_command(git status)',
      'mcp_pulse_pulse_should_interrupt',
      'mcp_pulse_pulse_ack_replan',
      'mcp_pulse_pulse_ack_events',
    ]);
    expect(settings.hooks.BeforeTool).toEqual([
      {
        hooks: [
          { type: 'command', name: 'pulse', command: expect.stringMatching(/^o=\$\(curl /), timeout: 10_000 },
        ],
      },
    ]);
    // Trust is the user's step: setup says where it stands and how, and writes nothing outside the project.
    expect(stdout).toContain(`Gemini does not trust ${await realpath(dir)} yet`);
    expect(stdout).toContain('choose "Trust folder"');
  });
});

describe('pulse setup claude --write', () => {
  it("allows pulse's three tools and the plan edit, enables its .mcp.json server, keeping the user's own rules", async () => {
    const dir = await project();
    await put(
      dir,
      '.claude/settings.local.json',
      JSON.stringify({ permissions: { allow: ['Bash(ls)'], deny: ['WebFetch'] } }),
    );
    expect((await setup('claude', dir, '--write')).code).toBe(0);
    const settings = JSON.parse(await read(dir, '.claude/settings.local.json'));
    expect(settings.permissions).toEqual({
      allow: [
        'Bash(ls)',
        'mcp__pulse__pulse_should_interrupt',
        'mcp__pulse__pulse_ack_replan',
        'mcp__pulse__pulse_ack_events',
        'Edit(/.pulse/plan.md)',
      ],
      deny: ['WebFetch'],
    });
    expect(settings.enabledMcpjsonServers).toEqual(['pulse']);
  });

  it('moves hooks of an older setup (node, this clone) to HTTP in place, without --force', async () => {
    const dir = await project();
    const older = `"${process.execPath}" "${BIN}" hook claude --event Stop`;
    await put(
      dir,
      '.claude/settings.local.json',
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: older, timeout: 3 }] }] } }),
    );
    expect((await setup('claude', dir, '--write')).code).toBe(0);
    const { hooks } = JSON.parse(await read(dir, '.claude/settings.local.json'));
    expect(hooks.Stop).toEqual([
      {
        hooks: [
          {
            type: 'http',
            url: `http://127.0.0.1:8765/hook/claude/Stop?project=${encodeURIComponent(dir)}`,
            headers: { Authorization: 'Bearer $PULSE_TOKEN' },
            allowedEnvVars: ['PULSE_TOKEN'],
            timeout: 3,
          },
        ],
      },
    ]);
  });

  it('refuses --hooks http for an agent that runs only command hooks', async () => {
    const { code, stderr } = await setup('codex', await project(), '--hooks', 'http');
    expect(code).toBe(1);
    expect(stderr).toContain('Codex runs hooks by curl or node, not http: use --hooks curl or --hooks node.');
  });
});

describe('pulse setup copilot --write', () => {
  it("shares Claude Code's .mcp.json entry and VS Code's instruction block: a project set up for all three has one of each", async () => {
    const dir = await project();
    for (const agent of ['claude', 'copilot', 'vscode']) {
      const { code, stdout } = await setup(agent, dir, '--write');
      expect(code, stdout).toBe(0);
    }
    expect(JSON.parse(await read(dir, '.mcp.json'))).toEqual({
      mcpServers: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's and Copilot's `${VAR:-}` syntax.
        pulse: { type: 'http', url: URL_8765(dir), headers: { Authorization: 'Bearer ${PULSE_TOKEN:-}' } },
      },
    });
    const block = await read(dir, '.github/copilot-instructions.md');
    expect(block.split('<!-- pulse:begin -->')).toHaveLength(2);
    // Each agent finds its entries as it left them, whichever ran last.
    for (const agent of ['claude', 'copilot', 'vscode']) {
      const again = await setup(agent, dir, '--write');
      expect(again.stdout, agent).toContain('Already set up');
    }
  });

  it("approves exactly pulse's three tools in a permissionRequest hook, beside the user's, once", async () => {
    const dir = await project();
    const mine = { type: 'command', matcher: 'bash', bash: './ask.sh' };
    await put(
      dir,
      '.github/hooks/pulse.json',
      JSON.stringify({ version: 1, hooks: { permissionRequest: [mine] } }),
    );
    expect((await setup('copilot', dir, '--write')).code).toBe(0);
    expect((await setup('copilot', dir, '--write')).stdout).toContain('Already set up');
    const { hooks } = JSON.parse(await read(dir, '.github/hooks/pulse.json'));
    expect(hooks.permissionRequest).toEqual([
      mine,
      {
        type: 'command',
        matcher: 'pulse/(pulse_should_interrupt|pulse_ack_replan|pulse_ack_events)',
        command: `echo '{"behavior":"allow"}'`,
        timeoutSec: 10,
      },
    ]);
    // The same line answers in bash and PowerShell; here, bash: the allow Copilot reads.
    expect(JSON.parse((await sh(hooks.permissionRequest[1].command, dir, '{}')).stdout)).toEqual({
      behavior: 'allow',
    });
  });

  it('says Copilot does not trust the folder yet, with the step, and stops saying so once the user trusted it', async () => {
    const dir = await project();
    const home = await project();
    const env = { COPILOT_HOME: home };
    const first = await runCli(['setup', 'copilot', '-p', dir, '--write'], { env });
    expect(first.stdout).toContain(`Copilot does not trust ${dir}`);
    expect(first.stdout).toContain(`add "${dir}" to trustedFolders in ${join(home, 'config.json')}`);
    // As Copilot writes it when the user answers "Yes, and remember this folder": JSON with comments.
    await put(
      home,
      'config.json',
      `// This file is managed automatically.\n{\n  "trustedFolders": ["${dirname(dir)}"]\n}\n`,
    );
    const trusted = await runCli(['setup', 'copilot', '-p', dir, '--write'], { env });
    expect(trusted.stdout).toContain('Already set up');
    expect(trusted.stdout).not.toContain('will not use all of this yet');
  });
});

describe('pulse setup opencode --write', () => {
  const PLUGIN = '.opencode/plugins/pulse.js';
  const ALLOW = {
    pulse_pulse_should_interrupt: 'allow',
    pulse_pulse_ack_replan: 'allow',
    pulse_pulse_ack_events: 'allow',
  };

  it("edits the user's commented opencode.jsonc in place, allowing pulse's three tools after their own rules", async () => {
    const dir = await project();
    const mine =
      '{\n  // my model\n  "model": "anthropic/claude-sonnet-4-5",\n  "permission": "ask", // ask me first\n}\n';
    await put(dir, 'opencode.jsonc', mine);
    const { code, stdout } = await setup('opencode', dir, '--write');
    expect(code, stdout).toBe(0);
    expect(await exists(join(dir, 'opencode.json')), 'opencode reads both: one is enough').toBe(false);
    const text = await read(dir, 'opencode.jsonc');
    expect(text).toContain('// my model');
    expect(text).toContain('// ask me first');
    const config = parseJsonc(text);
    // opencode reads a permission that is one action as {"*": action}; it goes by the last rule that matches.
    expect(config.permission).toEqual({ '*': 'ask', ...ALLOW });
    expect(config.mcp.pulse).toEqual({
      type: 'remote',
      url: URL_8765(dir),
      headers: { Authorization: 'Bearer {env:PULSE_TOKEN}' },
    });
  });

  it("takes a rule of the user's for one of pulse's tools for a conflict, and allows the tool with --force", async () => {
    const dir = await project();
    await put(dir, 'opencode.json', JSON.stringify({ permission: { pulse_pulse_ack_replan: 'deny' } }));
    const refused = await setup('opencode', dir, '--write');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      'conflict     opencode.json: has "permission.pulse_pulse_ack_replan": "deny"',
    );
    const forced = await setup('opencode', dir, '--write', '--force');
    expect(forced.code, forced.stdout).toBe(0);
    expect(forced.stdout).toContain('replaced your permission rules for pulse_pulse_ack_replan');
    expect(JSON.parse(await read(dir, 'opencode.json')).permission).toEqual(ALLOW);
  });

  it("replaces its own plugin of an older pulse, and refuses one changed by hand, one for another port or a file of the user's, until --force", async () => {
    const dir = await project();
    expect((await setup('opencode', dir, '--write')).code).toBe(0);
    const written = await read(dir, PLUGIN);
    const [marker, ...lines] = written.split('\n');
    const rest = lines.join('\n');

    // What an older pulse wrote: its own version and code, the hash of what it wrote.
    const olderRest = rest.replace('var TIMEOUT_MS = 8e3;', 'var TIMEOUT_MS = 5e3;');
    expect(olderRest).not.toBe(rest);
    const hash = createHash('sha256').update(olderRest).digest('hex');
    const older = `${marker!.replace(/pulse-agent \S+/, 'pulse-agent 0.1.0').replace(/sha256 [0-9a-f]+/, `sha256 ${hash}`)}\n${olderRest}`;
    await put(dir, PLUGIN, older);
    const upgraded = await setup('opencode', dir, '--write');
    expect(upgraded.code, upgraded.stdout).toBe(0);
    expect(upgraded.stdout).toContain(`changed   ${PLUGIN}`);
    expect(await read(dir, PLUGIN)).toBe(written);

    const cases: Array<[string, string, string]> = [
      ['changed by hand', `${written}// mine\n`, "is pulse's plugin, changed since pulse wrote it"],
      [
        "a file of the user's",
        'export const Mine = async () => ({});\n',
        'is not pulse\'s plugin (its first line is not "// pulse-agent <version> opencode plugin")',
      ],
    ];
    for (const [what, text, problem] of cases) {
      await put(dir, PLUGIN, text);
      const refused = await setup('opencode', dir, '--write');
      expect(refused.code, what).toBe(1);
      expect(refused.stdout, what).toContain(`conflict     ${PLUGIN}: ${problem}; left as it is`);
      expect(await read(dir, PLUGIN), what).toBe(text);
    }
    const forced = await setup('opencode', dir, '--write', '--force');
    expect(forced.code, forced.stdout).toBe(0);
    expect(await read(dir, PLUGIN)).toBe(written);

    expect((await setup('opencode', dir, '--write', '--port', '9000')).code).toBe(1);
    const elsewhere = await setup('opencode', dir, '--write', '--port', '9000', '--force');
    expect(elsewhere.stdout).toContain(`(127.0.0.1:8765, ${dir})`);
    const back = await setup('opencode', dir, '--write');
    expect(back.code).toBe(1);
    expect(back.stdout).toContain(
      `is pulse's plugin for another port or project (127.0.0.1:9000, ${dir}); left as it is`,
    );
  });

  it('refuses --hooks and --autostart, saying what to do instead', async () => {
    const dir = await project();
    const hooks = await setup('opencode', dir, '--hooks', 'curl');
    expect(hooks.code).toBe(1);
    expect(hooks.stderr).toContain(
      `opencode has no command hooks: pulse's plugin (${PLUGIN}) posts them to the daemon itself, so there is no --hooks curl: leave out --hooks.`,
    );
    const autostart = await setup('opencode', dir, '--autostart');
    expect(autostart.code).toBe(1);
    expect(autostart.stderr).toContain(
      "pulse's opencode plugin runs inside opencode and starts no program, so nothing can start pulse with it: start the daemon yourself with",
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('says opencode asks nothing before it uses the files, and where its stop cannot be held', async () => {
    const { code, stdout } = await setup('opencode', await project());
    expect(code).toBe(0);
    expect(stdout).toContain('opencode asks nothing before it uses these');
    expect(stdout).toContain(
      'opencode run exits when the agent stops, so there pulse holds the next tool call instead',
    );
    expect(stdout).not.toContain('will not use all of this yet');
  });
});

/** Runs a command line through the shell, as the agents run hooks. */
const sh = (command: string, cwd: string, stdin = '') =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile('sh', ['-c', command], { cwd }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
    // A hook may answer without reading its input (Copilot's permissionRequest echo): the pipe then breaks.
    child.stdin!.on('error', () => {});
    child.stdin!.end(stdin);
  });

describe('pulse setup', () => {
  it('without --write prints the three parts with their files and writes nothing', async () => {
    const dir = await project();
    const { code, stdout } = await setup('claude', dir);
    expect(code).toBe(0);
    expect(stdout).toContain('1. MCP server, in .mcp.json:');
    expect(stdout).toContain('2. Hooks, in .claude/settings.local.json');
    expect(stdout).toContain('keeps out of git');
    expect(stdout).toContain('3. Instructions, in CLAUDE.md:');
    expect(stdout).toContain(`"url": "${URL_8765(dir)}"`);
    expect(stdout).toContain('/hook/claude/PreToolUse?project=');
    expect(stdout).toContain('would create CLAUDE.md');
    expect(await readdir(dir)).toEqual([]);
  });

  it('--json gives the same as data, and --port sets the url', async () => {
    const dir = await project();
    const { code, stdout } = await setup('vscode', dir, '--json', '--port', '9100');
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as SetupResult;
    expect(result.url).toBe(`http://127.0.0.1:9100/p/${projectId(dir)}/mcp`);
    expect(result.written).toBe(false);
    expect(result.parts.map((part) => [part.part, part.file])).toEqual([
      ['mcp', '.vscode/mcp.json'],
      ['instructions', '.github/copilot-instructions.md'],
    ]);
    expect(JSON.parse(result.parts[0]!.snippet)).toEqual({
      servers: { pulse: { type: 'http', url: `http://127.0.0.1:9100/p/${projectId(dir)}/mcp` } },
    });
    expect(result.files.map((file) => file.status)).toEqual(['created', 'created']);
    expect(result.notes.join(' ')).toContain('No hooks');
    expect(await readdir(dir)).toEqual([]);
  });

  it('names the agents it knows when given another, and refuses --port 0', async () => {
    const dir = await project();
    const unknown = await setup('windsurf', dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`Allowed choices are ${SETUP_AGENTS.join(', ')}`);
    const zero = await setup('claude', dir, '--port', '0');
    expect(zero.code).toBe(1);
    expect(zero.stderr).toContain('--port 0 picks a free port');
    const missing = await setup('claude', join(dir, 'nope'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
  });

  it('replaces only its own block in a markdown file on a later run with other content', async () => {
    const dir = await project();
    await put(
      dir,
      'AGENTS.md',
      'Intro.\n\n<!-- pulse:begin -->\nold pulse text\n<!-- pulse:end -->\n\nOutro.\n',
    );
    const { code } = await setup('codex', dir, '--write');
    expect(code).toBe(0);
    const text = await read(dir, 'AGENTS.md');
    expect(text.startsWith('Intro.\n\n<!-- pulse:begin -->\n## pulse\n')).toBe(true);
    expect(text.endsWith('<!-- pulse:end -->\n\nOutro.\n')).toBe(true);
    expect(text).not.toContain('old pulse text');
  });

  it('takes a pulse hook of another clone or port for a conflict, and points it here with --force', async () => {
    const dir = await project();
    const old = '"/old/node" "/old/pulse/dist/src/cli.js" hook claude --event Stop';
    const otherPort = `http://127.0.0.1:9000/hook/claude/PreToolUse?project=${encodeURIComponent(dir)}`;
    const settings = {
      hooks: {
        Stop: [{ hooks: [{ type: 'command', command: old, timeout: 3 }] }],
        PreToolUse: [{ hooks: [{ type: 'http', url: otherPort }] }],
      },
    };
    await put(dir, '.claude/settings.local.json', JSON.stringify(settings));
    const refused = await setup('claude', dir, '--write');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`hooks that reach another pulse, port or project (`);
    const forced = await setup('claude', dir, '--write', '--force');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('replaced 2 pulse hook(s) reaching another pulse, port or project');
    const { hooks } = JSON.parse(await read(dir, '.claude/settings.local.json'));
    expect(hooks.Stop).toHaveLength(1);
    expect(hooks.Stop[0].hooks[0]).toMatchObject({ type: 'http', timeout: 3 });
    expect(hooks.Stop[0].hooks[0]).not.toHaveProperty('command');
    expect(hooks.PreToolUse[0].hooks[0].url).toContain('127.0.0.1:8765/hook/claude/PreToolUse');
  });

  it('never writes outside the project folder through a symlink', async () => {
    const dir = await project();
    const elsewhere = await project();
    await writeFile(join(elsewhere, 'CLAUDE.md'), 'Global rules.\n');
    await symlink(join(elsewhere, 'CLAUDE.md'), join(dir, 'CLAUDE.md'));
    const { code, stdout } = await setup('claude', dir, '--write');
    expect(code).toBe(1);
    expect(stdout).toContain(
      `cannot edit  CLAUDE.md: leads outside the project folder, to ${join(elsewhere, 'CLAUDE.md')}`,
    );
    expect(await read(elsewhere, 'CLAUDE.md')).toBe('Global rules.\n');
    expect(await exists(join(dir, '.mcp.json'))).toBe(false);
  });

  it('gives the daemon the same rule as its MCP instructions', async () => {
    const daemon = await startDaemon(await project());
    daemons.push(daemon);
    const client = await connectClient(daemon.url);
    expect(client.getInstructions()).toBe(AGENT_RULE);
    await client.close();
  });
});
