import { type ChildProcess, spawn } from 'node:child_process';
import { access, chmod, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SETUP_AGENTS } from '../../src/setup/agent-names.js';
import { shellQuote } from '../../src/setup/hook-handlers.js';
import {
  CLI,
  callTool,
  connectClient,
  oneShot,
  type RunningDaemon,
  removeProject,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { daemonRecord, recordedDaemon } from '../support/daemon-record.js';
import { isRunning } from '../support/processes.js';
import { type Decision, TEMPLATES } from '../support/protocol.js';
import { saveSources } from '../support/trust.js';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const daemons: RunningDaemon[] = [];
const projects: string[] = [];
const servers: Server[] = [];
const terminals: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.kill9()));
  for (const terminal of terminals.splice(0)) terminal.kill('SIGKILL');
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await Promise.all(projects.splice(0).map(removeProject));
});

const project = async () => {
  const dir = await tempProject('pulse-cli-');
  projects.push(dir);
  return dir;
};

const start = async (dir: string) => {
  const daemon = await startDaemon(dir);
  daemons.push(daemon);
  return daemon;
};

/** Writes guidance and lets the daemon log it; returns the pending event id. */
const changeGuidance = async (daemon: RunningDaemon, text: string) => {
  await writeFile(join(daemon.project, '.pulse', 'guidance.md'), text);
  const client = await connectClient(daemon.url);
  const answer = await callTool<Decision>(client, 'pulse_should_interrupt');
  await client.close();
  return answer.pending_replan_event_id!;
};

const isRoot = process.getuid?.() === 0;

describe('pulse start', () => {
  it('prints the watched folder and the MCP endpoint, and serves MCP there', async () => {
    const dir = await project();
    const daemon = await start(dir);
    expect(daemon.output()).toContain(`Watching ${join(dir, '.pulse')}`);
    expect(daemon.output()).toMatch(/MCP endpoint: http:\/\/127\.0\.0\.1:\d+\/p\/[\w.-]+-[0-9a-f]{8}\/mcp/);
    expect(daemon.output()).toMatch(/^Created \.pulse\/task\.md, guidance\.md, .*state\.json$/m);
    expect(daemon.port).toBeGreaterThan(0);
    const { status, body } = await oneShot(daemon.url, 'tools/call', {
      name: 'pulse_should_interrupt',
      arguments: {},
    });
    expect(status).toBe(200);
    expect(body.result!.structuredContent!.needs_replan).toBe(false);
  });

  it('prints a short summary: folder, sources, log file, limits, status page, endpoint, and how to connect an agent', async () => {
    const dir = await project();
    const daemon = await start(dir);
    await waitUntil(() => daemon.output().includes('Connect an agent:'), { describe: () => 'the summary' });
    // Log lines on stderr start with their time; the rest is the summary, on stdout.
    const summary = daemon
      .output()
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('['));
    expect(summary).toEqual([
      'Created .pulse/task.md, guidance.md, constraints.md, plan.md, events.jsonl, .gitignore, state.json',
      `Watching ${join(dir, '.pulse')}`,
      'Sources: none (.pulse/sources.json)',
      `Log: ${join(dir, '.pulse', 'pulse.log')} (--log-level info)`,
      expect.stringMatching(
        /^Limits: 256 connections \(open-file limit \d+\), headers within 10s, requests within 30s; 1000 MCP sessions, each closed after 30m idle$/,
      ),
      `Access: ${userInfo().username} (uid ${process.getuid!()}) only: a connection from another account on this machine is refused`,
      `Status page: ${new URL('./', daemon.url).href}`,
      `MCP endpoint: ${daemon.url}`,
      `Connect an agent: pulse setup <${SETUP_AGENTS.join('|')}> --write -p ${shellQuote(dir)} --port ${daemon.port}`,
    ]);
  });

  it('counts the sources and their servers in the summary once sources.json is read, names the thinker, and says when it is broken', async () => {
    const dir = await project();
    const server = { command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60_000)'] };
    const source = { server: 'cal', tool: 'list_events', interval_sec: 300 };
    await mkdir(join(dir, '.pulse'));
    await saveSources(
      dir,
      JSON.stringify({
        mcpServers: { cal: server },
        sources: [
          { name: 'a', ...source },
          { name: 'b', ...source },
        ],
      }),
    );
    const two = await start(dir);
    await waitUntil(() => two.output().includes('Connect an agent:'), { describe: () => 'the summary' });
    expect(two.output()).toMatch(/^Sources: 2 sources from 1 server\nThinker: rules$/m);
    expect(await two.stop()).toBe(0);

    // The thinker asked for cannot judge yet: the summary says who does meanwhile, and why.
    await saveSources(
      dir,
      JSON.stringify({
        mcpServers: { cal: server },
        sources: [{ name: 'a', ...source }],
        reflection: { thinker: 'sampling' },
      }),
    );
    const sampling = await start(dir);
    await waitUntil(() => sampling.output().includes('Connect an agent:'), { describe: () => 'the summary' });
    expect(sampling.output()).toMatch(
      /^Thinker: sampling configured, rules judging now: no connected 2025-era MCP session offers sampling \(2026-07-28 clients cannot be asked: pulse judges between their requests\); the rules judge until one connects$/m,
    );
    expect(await sampling.stop()).toBe(0);

    await saveSources(dir, '{ "mcpServers": ');
    const broken = await start(dir);
    await waitUntil(() => broken.output().includes('Connect an agent:'), { describe: () => 'the summary' });
    expect(broken.output()).toMatch(/^Sources: \.pulse\/sources\.json has an error \(see pulse status\)$/m);
    expect(broken.output()).toMatch(/\] warning: sources\.json rejected/);
  });

  it('exits 1 when the port is in use, naming the port and --port', async () => {
    // A program that takes connections and never answers; it reads them, so it sees them close.
    const server = createServer((socket) => socket.resume());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const dir = await project();
    const { code, stderr } = await runCli(['start', '--project', dir, '--port', String(port)]);
    expect(code).toBe(1);
    expect(stderr).toContain(`Port ${port}`);
    expect(stderr).toContain('--port');
    expect(daemonRecord(dir)).toBeNull();
  });

  it('creates a project folder that does not exist yet, and says so', async () => {
    const dir = join(await project(), 'my-project');
    const daemon = await start(dir);
    expect(daemon.output()).toContain(`Created the project folder ${dir}\n`);
    expect(daemon.output()).toMatch(/^Created \.pulse\/task\.md, /m);
    expect(await exists(join(dir, '.pulse', 'guidance.md'))).toBe(true);
  });

  it('exits 1 with a clear message when neither the project folder nor its parent exists, and creates nothing', async () => {
    const parent = join(await project(), 'no-such-folder');
    const dir = join(parent, 'my-project');
    const { code, stderr } = await runCli(['start', '--project', dir, '--port', '0']);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `Project folder ${dir} does not exist, and neither does ${parent}: check the path`,
    );
    expect(await exists(parent)).toBe(false);
  });

  it.skipIf(isRoot)(
    'exits 1 with a clear message when the project folder is not writable (skipped as root: chmod does not stop root from writing)',
    async () => {
      const dir = await project();
      await chmod(dir, 0o555);
      try {
        const { code, stderr } = await runCli(['start', '--project', dir, '--port', '0']);
        expect(code).toBe(1);
        expect(stderr).toContain(join(dir, '.pulse'));
        expect(stderr).toContain('writable');
      } finally {
        await chmod(dir, 0o755);
      }
    },
  );

  it('starts on a corrupt state.json: keeps it as state.json.bak, warns, and recovers the last ack', async () => {
    const dir = await project();
    let daemon = await start(dir);
    const pending = await changeGuidance(daemon, 'switch to the new API\n');
    const client = await connectClient(daemon.url);
    const ack = await callTool<{ accepted: boolean }>(client, 'pulse_ack_replan', { event_id: pending });
    await client.close();
    expect(ack.accepted).toBe(true);
    expect(await daemon.stop()).toBe(0);

    // A torn write: the file stops in the middle, after the ack id.
    const state = join(dir, '.pulse', 'state.json');
    const whole = await readFile(state, 'utf8');
    const ackAt = whole.indexOf(`"last_acknowledged_event_id": "${pending}"`);
    const torn = whole.slice(0, whole.indexOf(pending, ackAt) + pending.length + 5);
    expect(() => JSON.parse(torn)).toThrow();
    await writeFile(state, torn);

    daemon = await start(dir);
    expect(daemon.output()).toMatch(/\] warning: state\.json was corrupt; kept it as state\.json\.bak/);
    expect(daemon.output()).toContain(pending);
    expect(await readFile(`${state}.bak`, 'utf8')).toBe(torn);
    expect(JSON.parse(await readFile(state, 'utf8')).last_acknowledged_event_id).toBe(pending);
    const after = await connectClient(daemon.url);
    const answer = await callTool<Decision>(after, 'pulse_should_interrupt');
    await after.close();
    expect(answer.last_acknowledged_event_id).toBe(pending);
    // Files that had not changed are not reported as new: the recovery raises no replan.
    expect(answer.needs_replan).toBe(false);
  });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`exits 0 on ${signal} and removes its daemon record`, async () => {
      const dir = await project();
      const daemon = await start(dir);
      expect(daemonRecord(dir)).toMatchObject({
        pid: daemon.process.pid,
        port: daemon.port,
        url: daemon.url,
      });
      const code = await daemon.stop(signal);
      expect(code, `ended by ${daemon.process.signalCode ?? 'exit'}; printed:\n${daemon.output()}`).toBe(0);
      expect(daemon.output()).toContain(`Received ${signal}; shutting down.`);
      expect(daemonRecord(dir)).toBeNull();
    });
  }

  // script(1) gives the daemon a terminal of its own; killing script closes that terminal, as
  // closing a terminal window does: the kernel sends SIGHUP, and writes to it fail from then on.
  it.runIf(process.platform === 'linux')(
    'shuts down cleanly when its terminal closes: the shutdown logged, its daemon record removed',
    async () => {
      const dir = await project();
      const command = ['exec', process.execPath, CLI, 'start', '--project', dir, '--port', '0'];
      const terminal = spawn('script', [
        '-qec',
        command.map((word) => shellQuote(word)).join(' '),
        '/dev/null',
      ]);
      terminals.push(terminal);
      let output = '';
      terminal.stdout!.on('data', (data) => {
        output += data;
      });
      await waitUntil(() => output.includes('MCP endpoint:'), { timeoutMs: 15_000, describe: () => output });
      const { pid } = recordedDaemon(dir);

      terminal.kill('SIGKILL');

      await waitUntil(() => !isRunning(pid) && daemonRecord(dir) === null, {
        describe: () => `pid ${pid} gone and its daemon record removed`,
      });
      const log = await readFile(join(dir, '.pulse', 'pulse.log'), 'utf8');
      expect(log).toContain('Received SIGHUP; shutting down.');
      expect(log).toContain('"msg":"pulse stopped"');
    },
  );
});

describe('pulse init', () => {
  it('creates .pulse/ with the exact templates, an empty log and a state.json', async () => {
    const dir = await project();
    const { code, stdout } = await runCli(['init', '--project', dir]);
    expect(code).toBe(0);
    for (const [name, text] of Object.entries(TEMPLATES)) {
      expect(await readFile(join(dir, '.pulse', name), 'utf8')).toBe(text);
      expect(stdout).toContain(`Created .pulse/${name}`);
    }
    expect(await readFile(join(dir, '.pulse', 'events.jsonl'), 'utf8')).toBe('');
    const state = JSON.parse(await readFile(join(dir, '.pulse', 'state.json'), 'utf8'));
    expect(state.schema_version).toBe(2);
    expect(Object.keys(state.last_hashes).sort()).toEqual(Object.keys(TEMPLATES).sort());
  });

  it('never overwrites: edited files stay, only missing ones are created again', async () => {
    const dir = await project();
    await mkdir(join(dir, '.pulse'));
    await writeFile(join(dir, '.pulse', 'guidance.md'), 'my own guidance\n');
    expect((await runCli(['init', '--project', dir])).code).toBe(0);
    expect(await readFile(join(dir, '.pulse', 'guidance.md'), 'utf8')).toBe('my own guidance\n');

    const again = await runCli(['init', '--project', dir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already initialised');

    await unlink(join(dir, '.pulse', 'task.md'));
    const third = await runCli(['init', '--project', dir]);
    expect(third.stdout.trim()).toBe('Created .pulse/task.md');
    expect(await readFile(join(dir, '.pulse', 'guidance.md'), 'utf8')).toBe('my own guidance\n');
  });

  it('creates a missing project folder, and exits 1 when its parent is missing too', async () => {
    const dir = join(await project(), 'missing');
    const created = await runCli(['init', '--project', dir]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`Created the project folder ${dir}\nCreated .pulse/task.md`);
    const { code, stderr } = await runCli(['init', '--project', join(dir, 'gone', 'deeper')]);
    expect(code).toBe(1);
    expect(stderr).toContain('does not exist, and neither does');
  });
});

describe('pulse status', () => {
  it('shows a pending replan from the running daemon, as text and as --json', async () => {
    const dir = await project();
    const daemon = await start(dir);
    await changeGuidance(daemon, 'first\n');
    // Not yet logged: the status call itself must see it (read-your-writes).
    await writeFile(join(dir, '.pulse', 'constraints.md'), 'read-only filesystem\n');

    const json = await runCli(['status', '--project', dir, '--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.daemon).toMatchObject({ running: true, url: daemon.url, pid: daemon.process.pid });
    expect(report.needs_replan).toBe(true);
    expect(report.pending_replan_files).toEqual(['.pulse/guidance.md', '.pulse/constraints.md']);
    expect(report.events).toBe(2);

    const text = await runCli(['status', '--project', dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`running (pid ${daemon.process.pid}) at ${daemon.url}`);
    expect(text.stdout).toContain(`PENDING — ${report.pending_replan_event_id}`);
  });

  it('shows a pending replan from the files when no daemon runs, as text and as --json', async () => {
    const dir = await project();
    const daemon = await start(dir);
    const pending = await changeGuidance(daemon, 'changed while running\n');
    await daemon.kill9();
    // A daemon that died leaves its record behind; status must not trust it.
    expect(daemonRecord(dir)?.pid).toBe(daemon.process.pid);

    const json = await runCli(['status', '--project', dir, '--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.daemon.running).toBe(false);
    expect(report.needs_replan).toBe(true);
    expect(report.pending_replan_event_id).toBe(pending);
    expect(report.pending_replan_files).toEqual(['.pulse/guidance.md']);

    const text = await runCli(['status', '--project', dir]);
    expect(text.stdout).toContain('not running');
    expect(text.stdout).toContain(`PENDING — ${pending} (.pulse/guidance.md)`);
  });

  it('refuses a folder that does not exist (a typo), with exit 1 and the fix, instead of "nothing pending"', async () => {
    const dir = join(await project(), 'typo');
    const { code, stdout, stderr } = await runCli(['status', '--project', dir]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(`Project folder ${dir} does not exist`);
    expect(stderr).toContain('-p DIR');
  });

  it('refuses a folder without .pulse/, with exit 1 and the command that starts pulse there', async () => {
    const dir = await project();
    const { code, stdout, stderr } = await runCli(['status', '--project', dir, '--json']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(`${dir} has no .pulse/ folder`);
    expect(stderr).toContain(`pulse start -p ${dir}`);
    expect(stderr).toContain(`pulse init -p ${dir}`);
  });

  it('says in one sources line that a broken sources.json runs no source, with its line and column', async () => {
    const dir = await project();
    await mkdir(join(dir, '.pulse'));
    // A trailing comma in an array: Node 20's JSON.parse names no position for it.
    await saveSources(dir, '{\n  "mcpServers": {},\n  "sources": [\n    {},\n  ]\n}\n');
    const daemon = await start(dir);
    const { code, stdout } = await runCli(['status', '--project', daemon.project]);
    expect(code).toBe(0);
    const sources = stdout.split('\n').filter((line) => line.startsWith('sources:'));
    expect(sources).toEqual([
      expect.stringMatching(
        /^sources: +ERROR .*sources\.json at line 5, column 3: is not valid JSON .*\(no source runs until it is fixed\)$/,
      ),
    ]);
  });

  it('says nothing is pending on a fresh project with no daemon', async () => {
    const dir = await project();
    await runCli(['init', '--project', dir]);
    const json = JSON.parse((await runCli(['status', '--project', dir, '--json'])).stdout);
    expect(json).toMatchObject({ needs_replan: false, pending_replan_event_id: null, events: 0 });
    expect((await runCli(['status', '--project', dir])).stdout).toContain('nothing pending');
  });
});
