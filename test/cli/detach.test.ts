import { execFileSync, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Discovery } from '../../src/store/daemon-record.js';
import { removeProject, runCli, setupWithAutostart, tempProject } from '../support/daemon.js';
import { daemonRecord, recordedDaemon } from '../support/daemon-record.js';
import { isRunning } from '../support/processes.js';

// `pulse start --detach`, `pulse stop` and `pulse setup --autostart` as a user (and an agent's
// session-start hook) run them: the built CLI, real daemons in the background, real hook files.

const projects: string[] = [];
const servers: Server[] = [];
const pids: number[] = [];

afterEach(async () => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await Promise.all(projects.splice(0).map(removeProject));
});

const project = async () => {
  const dir = await tempProject('pulse-detach-');
  projects.push(dir);
  return dir;
};

const discovery = async (dir: string): Promise<Discovery> => {
  const found = recordedDaemon(dir);
  pids.push(found.pid);
  return found;
};

/** A port some other program holds. */
const takenPort = async (): Promise<number> => {
  // A program that takes connections and never answers; it reads them, so it sees them close.
  const server = createServer((socket) => socket.resume());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
};

/** A free port for a daemon that must be found at a known port (hooks name it). */
const freePort = async (): Promise<number> => {
  const port = await takenPort();
  await new Promise((resolve) => servers.pop()!.close(resolve));
  return port;
};

describe('pulse start --detach', () => {
  it('returns once the endpoint answers, leaves the daemon running with its log in .pulse/pulse.log, and pulse stop ends it', async () => {
    const dir = join(await project(), 'new-project');
    const started = await runCli(['start', '--detach', '-p', dir, '--port', '0']);
    expect(started.code, started.stderr).toBe(0);
    const running = await discovery(dir);
    // Answered at once: the command returned only after the endpoint did.
    const health = await fetch(new URL('/healthz', running.url));
    expect(health.status).toBe(200);
    expect(started.stdout).toContain(`Created the project folder ${dir}`);
    expect(started.stdout).toContain(`MCP endpoint: ${running.url}`);
    expect(started.stdout).toContain(
      `Running in the background (pid ${running.pid}); its log: ${join(dir, '.pulse', 'pulse.log')}. Stop it with: pulse stop -p ${dir}`,
    );
    expect(await readFile(join(dir, '.pulse', 'pulse.log'), 'utf8')).toContain('"msg":"pulse started"');
    expect(await readFile(join(dir, '.pulse', 'pulse-stderr.log'), 'utf8')).toBe('');

    const stopped = await runCli(['stop', '-p', dir]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe(`Stopped pulse (pid ${running.pid}) for ${dir}.`);
    expect(isRunning(running.pid)).toBe(false);
    expect(daemonRecord(dir)).toBeNull();
    const again = await runCli(['stop', '-p', dir]);
    expect(again).toMatchObject({ code: 0, stdout: `pulse is not running for ${dir}.\n` });
  });

  it('exits 1 with the reason when the daemon cannot start, and leaves nothing running', async () => {
    const dir = await project();
    const port = await takenPort();
    const { code, stdout, stderr } = await runCli(['start', '--detach', '-p', dir, '--port', String(port)]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(daemonRecord(dir)).toBeNull();
  });

  it('refuses a second daemon for the project, naming the running one and how to stop it', async () => {
    const dir = await project();
    expect((await runCli(['start', '--detach', '-p', dir, '--port', '0'])).code).toBe(0);
    const running = await discovery(dir);
    const second = await runCli(['start', '--detach', '-p', dir, '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`pulse is already running for this project (pid ${running.pid}`);
    expect(second.stderr).toContain(`pulse stop -p ${dir}`);
    expect((await runCli(['stop', '-p', dir])).code).toBe(0);
  });

  it('pulse stop refuses a folder that is not there, instead of saying nothing runs', async () => {
    const dir = join(await project(), 'typo');
    const { code, stderr } = await runCli(['stop', '-p', dir]);
    expect(code).toBe(1);
    expect(stderr).toContain(`Project folder ${dir} does not exist`);
  });
});

/** The command of the first hook under `event` in a Claude Code or Codex hooks file. */
const hookOf = async (file: string, event: string) => {
  const doc = JSON.parse(await readFile(file, 'utf8'));
  return doc.hooks[event][0].hooks[0] as { type: string; command?: string; url?: string; timeout: number };
};

/** Runs a command hook as the agent host does: through a shell, the hook JSON on stdin. */
const runHookCommand = (command: string, input: object) => {
  const result = spawnSync('sh', ['-c', command], {
    input: JSON.stringify(input),
    encoding: 'utf8',
    timeout: 40_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
};

describe('pulse setup --autostart', () => {
  it('claude: a session start with no daemon starts it, and the first tool call is held while a replan is pending', async () => {
    const dir = await project();
    const port = await freePort();
    await setupWithAutostart('claude', dir, port);
    const settings = join(dir, '.claude', 'settings.local.json');
    const sessionStart = await hookOf(settings, 'SessionStart');
    expect(sessionStart).toMatchObject({ type: 'command', timeout: 30 });
    expect(sessionStart.command).toContain(
      `hook claude --event SessionStart --autostart -p "${dir}" --port ${port}`,
    );
    // The user changed the guidance while no daemon ran.
    expect((await runCli(['init', '-p', dir])).code).toBe(0);
    await writeFile(join(dir, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API.\n');

    const session = { session_id: 'autostart-1', cwd: dir, transcript_path: '/dev/null' };
    const start = runHookCommand(sessionStart.command!, {
      ...session,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    expect(start.code, start.stderr).toBe(0);
    expect(start.stderr).toBe('');
    const running = await discovery(dir);
    expect(running.port).toBe(port);
    expect((await fetch(new URL('/healthz', running.url))).status).toBe(200);
    const told = JSON.parse(start.stdout);
    expect(told.hookSpecificOutput.additionalContext).toContain('a replan is pending');

    const preToolUse = await hookOf(settings, 'PreToolUse');
    expect(preToolUse.type).toBe('http');
    const held = await fetch(preToolUse.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...session,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'npm test' },
      }),
    });
    const answer = await held.json();
    expect(answer.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain('a replan is pending');

    // A second session start finds it running and starts nothing.
    const again = runHookCommand(sessionStart.command!, {
      ...session,
      session_id: 'autostart-2',
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    expect(again.code).toBe(0);
    expect((await discovery(dir)).pid).toBe(running.pid);
    expect((await runCli(['stop', '-p', dir])).code).toBe(0);

    expect(await setupWithAutostart('claude', dir, port)).toContain('Already set up for Claude Code');
  });

  it('codex: the session-start hook starts the daemon, the other hooks stay curl lines', async () => {
    const dir = await project();
    const port = await freePort();
    await setupWithAutostart('codex', dir, port);
    const hooks = join(dir, '.codex', 'hooks.json');
    const sessionStart = await hookOf(hooks, 'SessionStart');
    expect(sessionStart.command).toContain('--autostart');
    expect((await hookOf(hooks, 'PreToolUse')).command).toMatch(/^o=\$\(curl /);
    const start = runHookCommand(sessionStart.command!, {
      session_id: 'codex-1',
      cwd: dir,
      hook_event_name: 'SessionStart',
      source: 'startup',
      model: 'gpt-5',
    });
    expect(start.code, start.stderr).toBe(0);
    expect((await discovery(dir)).port).toBe(port);
    expect((await runCli(['stop', '-p', dir])).code).toBe(0);
  });

  it('copilot: the sessionStart hook starts the daemon, tells the pending replan, and the other hooks stay curl lines', async () => {
    const dir = await project();
    const port = await freePort();
    await setupWithAutostart('copilot', dir, port);
    const { hooks } = JSON.parse(await readFile(join(dir, '.github', 'hooks', 'pulse.json'), 'utf8'));
    const [sessionStart] = hooks.sessionStart as { bash: string; timeoutSec: number }[];
    expect(sessionStart).toMatchObject({ type: 'command', timeoutSec: 30 });
    expect(sessionStart!.bash).toContain(
      `hook copilot --event sessionStart --autostart -p "${dir}" --port ${port}`,
    );
    expect(hooks.preToolUse[0].bash).toMatch(/^o=\$\(curl /);
    expect((await runCli(['init', '-p', dir])).code).toBe(0);
    await writeFile(join(dir, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API.\n');
    const start = runHookCommand(sessionStart!.bash, {
      sessionId: 'copilot-1',
      timestamp: 0,
      cwd: dir,
      source: 'new',
      initialPrompt: 'Carry on.',
    });
    expect(start.code, start.stderr).toBe(0);
    expect((await discovery(dir)).port).toBe(port);
    expect(JSON.parse(start.stdout).additionalContext).toContain('a replan is pending');
    expect((await runCli(['stop', '-p', dir])).code).toBe(0);
  });

  it('fails open when the daemon cannot start: the session goes on and the user is told why', async () => {
    const dir = await project();
    const port = await takenPort();
    await setupWithAutostart('claude', dir, port);
    const sessionStart = await hookOf(join(dir, '.claude', 'settings.local.json'), 'SessionStart');
    const start = runHookCommand(sessionStart.command!, {
      session_id: 'no-start',
      cwd: dir,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    expect(start.code).toBe(0);
    const answer = JSON.parse(start.stdout);
    expect(answer.systemMessage).toContain(`it did not start: Port ${port} on 127.0.0.1 is already in use`);
    expect(start.stderr).toContain('not enforcing replans');
  });

  it('is refused for agents whose host runs no hook at session start, with how to start pulse instead', async () => {
    const dir = await project();
    for (const agent of ['cursor', 'vscode']) {
      const { code, stderr } = await runCli(['setup', agent, '--autostart', '--write', '-p', dir]);
      expect(code).toBe(1);
      expect(stderr).toContain(`pulse start --detach -p ${dir}`);
    }
    expect(execFileSync('ls', ['-A', dir], { encoding: 'utf8' })).toBe('');
  });
});
