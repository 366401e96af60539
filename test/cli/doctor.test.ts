import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/commands/doctor.js';
import { SETUP_AGENTS } from '../../src/setup/agent-names.js';
import { projectId } from '../../src/store/project-id.js';
import {
  BIN,
  connectClient,
  runCli,
  setupWithAutostart,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { trackStarted } from '../support/started.js';

// `pulse doctor` as a user runs it: the built CLI against real projects, a real daemon and the
// files `pulse setup` wrote.

const started = trackStarted();
afterEach(started.cleanUp);

const project = async () => {
  const dir = await tempProject('pulse-doctor-');
  started.projects.push(dir);
  return dir;
};

const doctor = async (dir: string, ...args: string[]) => {
  const { code, stdout, stderr } = await runCli(['doctor', '-p', dir, '--json', ...args], {
    env: { OPENCODE_DISABLE_PROJECT_CONFIG: '' },
  });
  expect(stderr).toBe('');
  return { code, report: JSON.parse(stdout) as DoctorReport };
};

const problems = (report: DoctorReport) =>
  report.findings.filter((f) => !f.ok).map(({ subject, message, fix }) => ({ subject, message, fix }));

const daemonOn = async (dir: string) => {
  const daemon = await startDaemon(dir);
  started.daemons.push(daemon);
  return daemon;
};

describe('pulse doctor', () => {
  it('says what to start in a folder pulse never ran in, and exits 1', async () => {
    const dir = await project();
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(problems(report)).toEqual([
      {
        subject: 'project',
        message: `${dir} has no .pulse/ folder: pulse has never run here`,
        fix: `Start it here: pulse start -p ${dir}`,
      },
    ]);
  });

  it('exits 0 when the daemon serves the project and an agent is set up for its port', async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    expect(
      (await runCli(['setup', 'claude', '--write', '-p', dir, '--port', String(daemon.port)])).code,
    ).toBe(0);
    const { code, report } = await doctor(dir);
    expect(problems(report)).toEqual([]);
    expect(code).toBe(0);
    expect(report.findings.map((f) => f.subject)).toEqual(['daemon', 'claude', 'security']);
    const { stdout } = await runCli(['doctor', '-p', dir]);
    expect(stdout).toContain(`ok  claude: set up for port ${daemon.port} (http hooks)`);
    expect(stdout.trimEnd().endsWith('All good.')).toBe(true);
  });

  it("says which way each agent working is tied: by elimination, by a hook that showed pulse's answer, or not yet", async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    const hook = (session: string, body: Record<string, unknown>) =>
      fetch(
        `http://127.0.0.1:${daemon.port}/hook/claude/${body.hook_event_name}?project=${encodeURIComponent(dir)}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ session_id: session, cwd: dir, ...body }),
        },
      );
    const connect = async () => {
      const client = await connectClient(daemon.url);
      started.clients.push(client);
      return client;
    };
    // One agent alone: its hook session and its MCP session are tied as it arrives.
    await connect();
    await hook('solo', { hook_event_name: 'SessionStart' });
    // Two more start together: only pulse's answer in a's PostToolUse ties a; b stays untied.
    await hook('a', { hook_event_name: 'SessionStart' });
    await hook('b', { hook_event_name: 'SessionStart' });
    const a = await connect();
    await connect();
    const answer = await a.callTool({ name: 'pulse_should_interrupt', arguments: {} });
    await hook('a', {
      hook_event_name: 'PostToolUse',
      tool_name: 'mcp__pulse__pulse_should_interrupt',
      tool_input: {},
      tool_response: (answer.content as Array<{ text: string }>)[0]!.text,
    });
    const { report } = await doctor(dir);
    const agents = report.findings.filter((f) => f.subject === 'agent').map((f) => f.message);
    expect(agents).toHaveLength(4);
    expect(agents.find((m) => m.includes('hook session solo'))).toMatch(/tied by elimination/);
    expect(agents.find((m) => /hook session a[,)]/.test(m))).toMatch(
      /tied by pulse's answer seen in its after-tool hook's input \(PostToolUse, AfterTool\)/,
    );
    expect(agents.find((m) => m.includes('hook session b)'))).toMatch(/acknowledge with agent "claude:b"/);
    expect(agents.filter((m) => /with no hook session/.test(m))).toHaveLength(1);
  });

  it('names what the daemon cannot see (a guidance.md that is a symlink, a loop here), and that no restart is needed', async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    await rm(join(dir, '.pulse', 'guidance.md'));
    await symlink('guidance.md', join(dir, '.pulse', 'guidance.md'));
    // The doctor asks /healthz, which scans nothing: wait until the daemon has looked.
    await waitUntil(async () => (await fetch(new URL('/healthz', daemon.url))).status === 503);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(problems(report)).toContainEqual({
      subject: 'daemon',
      message:
        'answers, but cannot see or record .pulse/: .pulse/guidance.md is a symlink, and pulse never reads through symlinks: replace it with a regular file.',
      fix: 'Fix what it names; the daemon notices within a second, no restart needed.',
    });
  });

  it('names an agent pointed at another port than the daemon serves, with both ways out', async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    await runCli(['setup', 'codex', '--write', '-p', dir, '--port', '9000']);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    const found = problems(report);
    expect(found[0]).toEqual({
      subject: 'codex',
      message: expect.stringContaining(
        `already has a "pulse" MCP server at http://127.0.0.1:9000/p/${projectId(dir)}/mcp, not http://127.0.0.1:${daemon.port}/p/${projectId(dir)}/mcp`,
      ),
      fix: expect.stringContaining('or keep it and pass --port 9000'),
    });
    expect(found.map((f) => f.subject)).toEqual(expect.arrayContaining(['codex']));
  });

  it('when no daemon runs, says to start it on the port the agents were set up for', async () => {
    const dir = await project();
    await runCli(['init', '-p', dir]);
    await runCli(['setup', 'cursor', '--write', '-p', dir, '--port', '9123']);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(problems(report)).toEqual([
      {
        subject: 'daemon',
        message:
          'not running (no daemon record of yours for this project): agents run without replans enforced',
        fix: `Start it: pulse start -p ${dir} --port 9123`,
      },
    ]);
  });

  it('finds node hooks whose pulse is gone, and says to set them up again', async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    await runCli(['setup', 'claude', '--write', '-p', dir, '--port', String(daemon.port), '--hooks', 'node']);
    const settings = join(dir, '.claude', 'settings.local.json');
    const text = await readFile(settings, 'utf8');
    await writeFile(settings, text.replaceAll('dist/bundle/bin.cjs', 'gone/bin.cjs'));
    const { report } = await doctor(dir);
    expect(problems(report)).toEqual([
      expect.objectContaining({
        subject: 'claude',
        message: expect.stringContaining('has pulse hooks that reach another pulse'),
      }),
      {
        subject: 'claude',
        message: expect.stringMatching(
          /hook runs \S+gone\/bin\.cjs, which does not exist: it fails open, nothing is enforced$/,
        ),
        fix: `pulse setup claude --write --force -p ${dir}`,
      },
    ]);
  });

  it("checks the --autostart hook: healthy as set up, then names a pulse that is gone or lies in npx's cache, with the setup that fixes it", async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    await setupWithAutostart('claude', dir, daemon.port);
    expect(problems((await doctor(dir)).report)).toEqual([]);
    const settings = join(dir, '.claude', 'settings.local.json');
    const asSetUp = await readFile(settings, 'utf8');
    const setUpAgain = `pulse setup claude --write --force --autostart -p ${dir} --port ${daemon.port}`;

    await writeFile(settings, asSetUp.replaceAll('dist/bundle/bin.cjs', 'gone/bin.cjs'));
    expect(problems((await doctor(dir)).report)).toContainEqual({
      subject: 'claude',
      message: expect.stringMatching(
        /^its SessionStart hook starts the daemon with \S+gone\/bin\.cjs, which does not exist: no daemon starts with a session/,
      ),
      fix: setUpAgain,
    });

    // A bin that exists, but where npm keeps what npx ran, which npm may clean.
    const cached = join(
      dir,
      'npm-cache',
      '_npx',
      '0123abcd',
      'node_modules',
      'pulse-agent',
      'dist',
      'bundle',
    );
    await mkdir(cached, { recursive: true });
    await copyFile(BIN, join(cached, 'bin.cjs'));
    await writeFile(settings, asSetUp.replaceAll(BIN, join(cached, 'bin.cjs')));
    expect(problems((await doctor(dir)).report)).toContainEqual({
      subject: 'claude',
      message: `its SessionStart hook starts the daemon from a package manager's cache (${join(cached, 'bin.cjs')}), which may be cleaned at any time: then no daemon starts with a session, and replans go unenforced until one is started by hand`,
      fix: expect.stringContaining(setUpAgain),
    });
  });

  it('names an --autostart hook that runs npx where there is no npx', async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    await setupWithAutostart('claude', dir, daemon.port);
    const settings = join(dir, '.claude', 'settings.local.json');
    const text = await readFile(settings, 'utf8');
    // What setup writes when run from npx's cache.
    const bin = JSON.stringify(`"${process.execPath}" "${BIN}"`).slice(1, -1);
    await writeFile(settings, text.replace(bin, 'npx -y pulse-agent@0.2.0'));
    const noNpx = await project();
    const { stdout } = await runCli(['doctor', '-p', dir, '--json'], { env: { PATH: noNpx } });
    expect(problems(JSON.parse(stdout) as DoctorReport)).toContainEqual({
      subject: 'claude',
      message:
        'its SessionStart hook starts the daemon with npx, which is not on PATH here: no daemon starts with a session, and replans go unenforced until one is started by hand',
      fix: `Install pulse where it stays (npm install -g pulse-agent), then run its setup: pulse setup claude --write --force --autostart -p ${dir} --port ${daemon.port}`,
    });
  });

  it("reports pulse's runtime files that git would track, and says how to ignore them", async () => {
    const dir = await project();
    execFileSync('git', ['init', '-q', dir]);
    const daemon = await daemonOn(dir);
    await runCli(['setup', 'claude', '--write', '-p', dir, '--port', String(daemon.port)]);
    expect(problems((await doctor(dir)).report)).toEqual([]);
    expect((await doctor(dir)).report.findings.find((f) => f.subject === 'git')).toMatchObject({
      subject: 'git',
      ok: true,
    });

    await rm(join(dir, '.pulse', '.gitignore'));
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(problems(report)).toEqual([
      {
        subject: 'git',
        message: expect.stringMatching(
          /^git would track pulse's runtime files: \.pulse\/state\.json, \.pulse\/events\.jsonl, /,
        ),
        fix: `pulse init -p ${dir} adds .pulse/.gitignore when it is missing; otherwise add those names to .pulse/.gitignore`,
      },
    ]);
  });

  it("says when git tracks Claude Code's local settings, whose permission rules Claude then ignores", async () => {
    const dir = await project();
    execFileSync('git', ['init', '-q', dir]);
    const daemon = await daemonOn(dir);
    await runCli(['setup', 'claude', '--write', '-p', dir, '--port', String(daemon.port)]);
    execFileSync('git', ['-C', dir, 'add', '-f', '.claude/settings.local.json']);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(problems(report)).toEqual([
      {
        subject: 'claude',
        message: expect.stringContaining(
          'git tracks .claude/settings.local.json, so Claude Code ignores its permission rules',
        ),
        fix: "git rm --cached .claude/settings.local.json (it holds this machine's paths), then commit",
      },
    ]);
  });

  it.each([
    ['codex', '.codex/hooks.json'],
    ['cursor', '.cursor/hooks.json'],
    ['gemini', '.gemini/settings.json'],
    ['copilot', '.github/hooks/pulse.json'],
  ])("says when git tracks %s's hooks file %s, which names this machine's path", async (agent, file) => {
    const dir = await project();
    execFileSync('git', ['init', '-q', dir]);
    const daemon = await daemonOn(dir);
    await runCli(['setup', agent, '--write', '-p', dir, '--port', String(daemon.port)]);
    const tracked = {
      subject: agent,
      message: `git tracks ${file}, which names this project's path and port on this machine: in another clone its hooks ask for a project that is not there and fail open`,
      fix: `git rm --cached ${file}, add it to .gitignore, then commit`,
    };
    expect(problems((await doctor(dir)).report)).not.toContainEqual(tracked);
    execFileSync('git', ['-C', dir, 'add', '-f', file]);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(problems(report)).toContainEqual(tracked);
  });

  it("says whether Copilot trusts the folder, and takes the .mcp.json Claude Code and Copilot share for neither's setup", async () => {
    const home = await project();
    const env = { COPILOT_HOME: home };
    const inProject = async (dir: string) => {
      const daemon = await daemonOn(dir);
      return {
        setUp: (agent: string) =>
          runCli(['setup', agent, '--write', '-p', dir, '--port', String(daemon.port)], { env }),
        report: async () =>
          JSON.parse((await runCli(['doctor', '-p', dir, '--json'], { env })).stdout) as DoctorReport,
      };
    };
    // The same pulse entry serves both agents: neither is set up by the other's, nor said to lack the rest.
    const copilotOnly = await inProject(await project());
    expect((await copilotOnly.setUp('copilot')).code).toBe(0);
    expect((await copilotOnly.report()).findings.map((f) => f.subject)).toEqual([
      'daemon',
      'copilot',
      'copilot',
      'security',
    ]);
    const dir = await project();
    const { setUp, report } = await inProject(dir);
    expect((await setUp('claude')).code).toBe(0);
    expect((await report()).findings.map((f) => f.subject)).toEqual(['daemon', 'claude', 'security']);

    expect((await setUp('copilot')).code).toBe(0);
    expect(problems(await report())).toEqual([
      {
        subject: 'copilot',
        message: `Copilot does not trust ${dir}: \`copilot -p\` loads neither pulse's hooks (.github/hooks/pulse.json) nor its MCP server (.mcp.json), without a word, and interactive copilot asks first`,
        fix: `Run copilot in ${dir} once and answer "Yes, and remember this folder for future sessions" (or add "${dir}" to trustedFolders in ${join(home, 'config.json')}); pulse never trusts a folder for you. For one \`copilot -p\` run only: --trust-folder.`,
      },
    ]);
    await writeFile(join(home, 'config.json'), JSON.stringify({ trustedFolders: [dir] }));
    const trusted = await report();
    expect(problems(trusted)).toEqual([]);
    expect(trusted.findings).toContainEqual({
      subject: 'copilot',
      ok: true,
      message: `Copilot trusts ${dir} (${join(home, 'config.json')}): it loads pulse's hooks and MCP server there`,
    });
  });

  it("checks opencode's plugin and config, and names what keeps opencode from them: its switch for project config, a plugin in git", async () => {
    const dir = await project();
    execFileSync('git', ['init', '-q', dir]);
    const daemon = await daemonOn(dir);
    const setup = await runCli(['setup', 'opencode', '--write', '-p', dir, '--port', String(daemon.port)]);
    expect(setup.code, setup.stdout).toBe(0);
    const { code, report } = await doctor(dir);
    expect(problems(report)).toEqual([]);
    expect(code).toBe(0);
    expect(report.findings.find((f) => f.subject === 'opencode')?.message).toBe(
      `set up for port ${daemon.port} (plugin hooks): opencode.json, .opencode/plugins/pulse.js, AGENTS.md`,
    );

    const off = await runCli(['doctor', '-p', dir, '--json'], {
      env: { OPENCODE_DISABLE_PROJECT_CONFIG: 'TRUE' },
    });
    expect(off.code).toBe(1);
    expect(problems(JSON.parse(off.stdout))).toEqual([
      {
        subject: 'opencode',
        message:
          "OPENCODE_DISABLE_PROJECT_CONFIG is set here, so opencode reads none of the project's opencode.json, AGENTS.md or .opencode/plugins/pulse.js: pulse's tools are not offered and no call is held",
        fix: 'unset OPENCODE_DISABLE_PROJECT_CONFIG where you run opencode',
      },
    ]);
    const zero = await runCli(['doctor', '-p', dir, '--json'], {
      env: { OPENCODE_DISABLE_PROJECT_CONFIG: '0' },
    });
    expect(zero.code, 'opencode reads only "true" and "1" as set').toBe(0);

    execFileSync('git', ['-C', dir, 'add', '-f', '.opencode/plugins/pulse.js']);
    expect(problems((await doctor(dir)).report)).toEqual([
      {
        subject: 'opencode',
        message: expect.stringContaining('git tracks .opencode/plugins/pulse.js, which names this project'),
        fix: 'git rm --cached .opencode/plugins/pulse.js, add it to .gitignore, then commit',
      },
    ]);

    await writeFile(join(dir, '.opencode', 'plugins', 'pulse.js'), '// mine\n');
    expect(problems((await doctor(dir)).report)).toContainEqual({
      subject: 'opencode',
      message: expect.stringContaining(".opencode/plugins/pulse.js is not pulse's plugin"),
      fix: `\`pulse setup opencode -p ${dir} --port ${daemon.port} --write --force\` writes pulse's plugin over it (after a backup).`,
    });
  });

  it('says when no agent is set up at all', async () => {
    const dir = await project();
    await daemonOn(dir);
    const { code, report } = await doctor(dir);
    expect(code).toBe(1);
    expect(problems(report)).toEqual([
      expect.objectContaining({
        subject: 'agents',
        fix: `pulse setup <${SETUP_AGENTS.join('|')}> --write -p ${dir}`,
      }),
    ]);
  });
});

describe("pulse doctor and Gemini CLI's folder trust, read from the user's files and never written", () => {
  /** A project set up for Gemini beside a daemon, and doctor's findings on Gemini's trust under `env`. */
  const geminiProject = async () => {
    const dir = await project();
    const daemon = await daemonOn(dir);
    await runCli(['setup', 'gemini', '--write', '-p', dir, '--port', String(daemon.port)]);
    const home = await project();
    await mkdir(join(home, '.gemini'));
    const trust = async (env: Record<string, string>) => {
      const { stdout } = await runCli(['doctor', '-p', dir, '--json'], {
        env: { GEMINI_CLI_HOME: home, ...env },
      });
      return (JSON.parse(stdout) as DoctorReport).findings.filter(
        (f) => f.subject === 'gemini' && !f.message.startsWith('set up for port'),
      );
    };
    return { dir, home, trust };
  };

  it('takes the longest rule, on real paths, from GEMINI_CLI_TRUSTED_FOLDERS_PATH when set', async () => {
    const { dir, home, trust } = await geminiProject();
    const rules = join(home, 'elsewhere.json');
    const link = join(home, 'link');
    await symlink(dir, link);
    // Through a link to the project, and a shorter rule that says otherwise.
    await writeFile(rules, JSON.stringify({ '/': 'DO_NOT_TRUST', [link]: 'TRUST_FOLDER' }));
    expect(await trust({ GEMINI_CLI_TRUSTED_FOLDERS_PATH: rules })).toEqual([
      { subject: 'gemini', ok: true, message: `Gemini trusts ${dir} ("${link}": TRUST_FOLDER in ${rules})` },
    ]);
    // The default file is not read then; without the variable it is, and it has no rule yet.
    await writeFile(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [dir]: 'DO_NOT_TRUST' }));
    expect(await trust({ GEMINI_CLI_TRUSTED_FOLDERS_PATH: rules })).toMatchObject([{ ok: true }]);
    expect(await trust({})).toMatchObject([{ ok: false, message: expect.stringContaining('untrusted') }]);
  });

  it('says trust is off when the user switched it off, and names a file Gemini cannot read', async () => {
    const { dir, home, trust } = await geminiProject();
    const settings = join(home, '.gemini', 'settings.json');
    await writeFile(settings, '{\n  // mine\n  "security": {"folderTrust": {"enabled": false}}\n}\n');
    expect(await trust({})).toEqual([
      {
        subject: 'gemini',
        ok: true,
        message: `folder trust is off in ${settings}: Gemini loads .gemini/settings.json in every folder`,
      },
    ]);
    await writeFile(settings, '{}');
    await writeFile(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [dir]: 'TRUST_ME' }));
    expect(await trust({})).toEqual([
      expect.objectContaining({
        ok: false,
        message: expect.stringContaining('the trust level "TRUST_ME", which Gemini does not know'),
      }),
    ]);
    expect(await trust({ GEMINI_CLI_TRUST_WORKSPACE: 'true' })).toMatchObject([
      { ok: true, message: expect.stringContaining('GEMINI_CLI_TRUST_WORKSPACE=true') },
    ]);
  });
});
