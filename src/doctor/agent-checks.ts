import { existsSync } from 'node:fs';
import { runSetup, type SetupFileReport } from '../commands/setup.js';
import { findProgram } from '../os/find-program.js';
import { inPackageCache } from '../package/pulse-command.js';
import { SETUP_AGENTS, type SetupAgent } from '../setup/agent-names.js';
import { agentSetup, setupDialectOf } from '../setup/agents.js';
import type { HookTransport } from '../setup/hook-handlers.js';
import { type InstalledHook, installedHooks } from '../setup/installed-hooks.js';
import { type Finding, holds, problem } from './finding.js';
import { isTrackedByGit } from './git-checks.js';

const CLAUDE_LOCAL_SETTINGS = '.claude/settings.local.json';

/** The MCP files `pulse setup` writes for more than one agent (Claude Code's and Copilot's .mcp.json). */
const SHARED_MCP_FILES: ReadonlySet<string> = (() => {
  // Which file an agent's entry goes in depends on neither the port nor the project.
  const anyTarget = {
    url: 'http://127.0.0.1:1/mcp',
    port: 1,
    project: '/',
    runtime: { nodePath: 'node', cliPath: 'pulse' },
    transport: 'curl' as const,
    pulse: 'pulse',
    autostart: false,
  };
  const files = SETUP_AGENTS.flatMap((agent) =>
    agentSetup(agent, anyTarget)
      .parts.filter((part) => part.part === 'mcp')
      .map((part) => part.file),
  );
  return new Set(files.filter((file, index) => files.indexOf(file) !== index));
})();

/** What an agent's checks need: the project, the port its entries should name, how to print a pulse command. */
export interface AgentCheckContext {
  project: string;
  port: number;
  /** `pulse <args>` as the user can run it. */
  command(args: string): string;
}

const WHAT: Record<SetupFileReport['part'], string> = {
  mcp: 'the pulse MCP server entry',
  hooks: "pulse's hooks",
  instructions: "pulse's instruction block",
};

/** Whether the hooks can run at all: curl is there, or the node and pulse they name exist and will stay. */
const hookTargetFindings = (
  agent: SetupAgent,
  hooks: InstalledHook[],
  context: AgentCheckContext,
): Finding[] => {
  const transports = new Set(hooks.map((hook) => hook.transport));
  const findings: Finding[] = [];
  if (transports.has('curl') && findProgram('curl') === null) {
    findings.push(
      problem(
        agent,
        'its hooks run curl, which is not on PATH here: every hook fails open, nothing is enforced',
        `Install curl, or: ${context.command(`setup ${agent} --write --hooks node -p ${context.project}`)}`,
      ),
    );
  }
  for (const hook of hooks) {
    if (hook.transport !== 'node') continue;
    const { nodePath, cliPath } = hook.runtime;
    const missing = [nodePath, cliPath].find((path) => !existsSync(path));
    if (missing !== undefined) {
      const place = setupDialectOf(agent).hooks;
      const unstartable =
        missing === nodePath && place !== undefined && 'unstartable' in place ? place.unstartable : undefined;
      findings.push(
        problem(
          agent,
          `its ${hook.event} hook runs ${missing}, which does not exist: ${unstartable ?? 'it fails open, nothing is enforced'}`,
          context.command(`setup ${agent} --write --force -p ${context.project}`),
        ),
      );
      break;
    }
    if (inPackageCache(cliPath)) {
      findings.push(
        problem(
          agent,
          `its hooks run pulse from a package manager's cache (${cliPath}), which may be cleaned at any time: the hooks would then stop enforcing without a word`,
          `Install pulse where it stays (a clone, or npm install -g), then run its ${context.command(`setup ${agent} --write --force -p ${context.project}`)}; or use --hooks curl`,
        ),
      );
      break;
    }
  }
  return findings;
};

type AutostartHook = Extract<InstalledHook, { transport: 'autostart' }>;

/**
 * Whether the session-start hook of `--autostart` can start the daemon, today and after npm
 * cleans its cache: the command it runs must exist and last (`setup` writes node and the bin of
 * an install that stays, or `npx -y pulse-agent@<version>`, which fetches pulse again).
 */
const autostartFinding = (
  agent: SetupAgent,
  hook: AutostartHook,
  context: AgentCheckContext,
): Finding | null => {
  const setUpAgain = context.command(
    `setup ${agent} --write --force --autostart -p ${context.project} --port ${hook.port}`,
  );
  const noDaemon = 'no daemon starts with a session, and replans go unenforced until one is started by hand';
  if (hook.runtime === null) {
    if (findProgram('npx') !== null) return null;
    return problem(
      agent,
      `its ${hook.event} hook starts the daemon with npx, which is not on PATH here: ${noDaemon}`,
      `Install pulse where it stays (npm install -g pulse-agent), then run its setup: pulse setup ${agent} --write --force --autostart -p ${context.project} --port ${hook.port}`,
    );
  }
  const missing = [hook.runtime.nodePath, hook.runtime.cliPath].find((path) => !existsSync(path));
  if (missing !== undefined)
    return problem(
      agent,
      `its ${hook.event} hook starts the daemon with ${missing}, which does not exist: ${noDaemon}`,
      setUpAgain,
    );
  if (inPackageCache(hook.runtime.cliPath))
    return problem(
      agent,
      `its ${hook.event} hook starts the daemon from a package manager's cache (${hook.runtime.cliPath}), which may be cleaned at any time: then ${noDaemon}`,
      `${setUpAgain} (from npx it writes npx -y pulse-agent@<version>, which fetches pulse again when cleaned); or install pulse where it stays (npm install -g pulse-agent) and run its setup`,
    );
  return null;
};

/**
 * One agent's entries in the project, judged by what `pulse setup` would write for the daemon's
 * port (a preview, nothing written), and whether its hooks can run. An agent with none of pulse's
 * entries is reported as not set up, which is not a problem on its own.
 */
export const checkAgent = async (
  agent: SetupAgent,
  context: AgentCheckContext,
): Promise<{ setUp: boolean; findings: Finding[] }> => {
  const hooks = agent === 'vscode' ? [] : await installedHooks(agent, context.project);
  const transport = hooks.find((hook) => hook.transport !== 'autostart')?.transport as
    | HookTransport
    | undefined;
  const autostart = hooks.some((hook) => hook.transport === 'autostart');
  const preview = await runSetup({
    agent,
    project: context.project,
    port: context.port,
    autostart,
    ...(transport ? { hooks: transport } : {}),
  });
  const mcp = preview.files.find((file) => file.part === 'mcp')!;
  // A server entry another agent writes too tells neither apart: their hooks do.
  const ownEntry =
    !SHARED_MCP_FILES.has(mcp.file) && (mcp.status === 'unchanged' || mcp.status === 'conflict');
  const setUp = ownEntry || hooks.length > 0;
  if (!setUp) return { setUp, findings: [] };
  const findings: Finding[] = [];
  const fix = context.command(
    `setup ${agent} --write -p ${context.project} --port ${context.port}${transport ? ` --hooks ${transport}` : ''}${autostart ? ' --autostart' : ''}`,
  );
  for (const file of preview.files) {
    if (file.status === 'unchanged') continue;
    const what = WHAT[file.part];
    if (file.status === 'conflict' || file.status === 'invalid') {
      findings.push(problem(agent, `${file.file} ${file.problem}`, file.fix ?? fix));
    } else {
      findings.push(problem(agent, `${file.file} lacks ${what}, or has an older one`, fix));
    }
  }
  findings.push(...hookTargetFindings(agent, hooks, context));
  for (const hook of hooks) {
    const finding = hook.transport === 'autostart' ? autostartFinding(agent, hook, context) : null;
    if (finding !== null) findings.push(finding);
  }
  const hooksFile = preview.files.find((file) => file.part === 'hooks')?.file;
  if (agent === 'claude' && (await isTrackedByGit(context.project, CLAUDE_LOCAL_SETTINGS))) {
    findings.push(
      problem(
        agent,
        `git tracks ${CLAUDE_LOCAL_SETTINGS}, so Claude Code ignores its permission rules: it will ask before each of pulse's tools, and an unattended agent held by a replan cannot acknowledge it`,
        `git rm --cached ${CLAUDE_LOCAL_SETTINGS} (it holds this machine's paths), then commit`,
      ),
    );
  } else if (hooksFile !== undefined && (await isTrackedByGit(context.project, hooksFile))) {
    findings.push(
      problem(
        agent,
        `git tracks ${hooksFile}, which names this project's path and port on this machine: in another clone its hooks ask for a project that is not there and fail open`,
        `git rm --cached ${hooksFile}, add it to .gitignore, then commit`,
      ),
    );
  }
  if (findings.length === 0) {
    const files = preview.files.map((file) => file.file).join(', ');
    findings.push(
      holds(agent, `set up for port ${context.port}${transport ? ` (${transport} hooks)` : ''}: ${files}`),
    );
  }
  return { setUp, findings };
};
