import { stat } from 'node:fs/promises';
import { checkAgent } from '../doctor/agent-checks.js';
import { checkAgentTies } from '../doctor/agent-ties.js';
import { checkCodexHome } from '../doctor/codex-checks.js';
import { checkCopilotHome } from '../doctor/copilot-checks.js';
import { checkDaemon } from '../doctor/daemon-checks.js';
import { type Finding, problem } from '../doctor/finding.js';
import { checkGeminiTrust } from '../doctor/gemini-checks.js';
import { checkGitIgnore } from '../doctor/git-checks.js';
import { checkOpencode } from '../doctor/opencode-checks.js';
import { checkSecurity } from '../doctor/security-checks.js';
import { checkSourcesTrust } from '../doctor/trust-checks.js';
import { HOOK_AGENTS } from '../hooks/events.js';
import { DEFAULT_PORT } from '../package/defaults.js';
import { pulse } from '../package/pulse-command.js';
import { SETUP_AGENTS } from '../setup/agent-names.js';
import { installedHooks } from '../setup/installed-hooks.js';
import { pulsePaths } from '../store/paths.js';

export interface DoctorOptions {
  project: string;
  /** The port to expect when no daemon runs (default 8765). */
  port?: number;
  env?: NodeJS.ProcessEnv;
}

/** What `pulse doctor` found; `--json` prints this. `ok` only when every finding holds. */
export interface DoctorReport {
  project: string;
  ok: boolean;
  findings: Finding[];
}

const isFolder = (path: string) =>
  stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );

/** The port the first agent's hooks reach (HTTP or curl hooks name it), if any. */
const setUpPort = async (project: string): Promise<number | undefined> => {
  for (const agent of HOOK_AGENTS) {
    for (const hook of await installedHooks(agent, project)) if (hook.transport !== 'node') return hook.port;
  }
  return undefined;
};

/**
 * The one command to run when something seems off: is the daemon up for this project and on the
 * port the agents were pointed at, are each agent's entries, hooks and permissions in place and
 * runnable, will Codex run the hooks, does Gemini trust the folder, and does git keep pulse's runtime files out. Every problem
 * comes with its exact fix.
 */
export const runDoctor = async ({
  project,
  port,
  env = process.env,
}: DoctorOptions): Promise<DoctorReport> => {
  const paths = pulsePaths(project);
  const root = paths.projectRoot;
  const report = (findings: Finding[]) => ({ project: root, ok: findings.every((f) => f.ok), findings });
  if (!(await isFolder(root))) {
    return report([problem('project', `${root} is not a folder`, 'Pass the project folder with -p DIR.')]);
  }
  // Without a daemon or --port, the port the agents' hooks were set up for is the one to start on.
  const expected = port ?? (await setUpPort(root)) ?? DEFAULT_PORT;
  const startCommand = pulse(`start -p ${root}${expected === DEFAULT_PORT ? '' : ` --port ${expected}`}`);
  if (!(await isFolder(paths.dir))) {
    return report([
      problem(
        'project',
        `${root} has no .pulse/ folder: pulse has never run here`,
        `Start it here: ${startCommand}`,
      ),
    ]);
  }
  const { findings, daemon } = await checkDaemon(paths, startCommand);
  const context = { project: root, port: daemon?.port ?? expected, command: pulse };
  let anySetUp = false;
  for (const agent of SETUP_AGENTS) {
    const checked = await checkAgent(agent, context);
    anySetUp ||= checked.setUp;
    findings.push(...checked.findings);
    if (agent === 'codex' && checked.setUp) findings.push(...(await checkCodexHome(root, env)));
    if (agent === 'gemini' && checked.setUp) findings.push(...(await checkGeminiTrust(root, env)));
    if (agent === 'copilot' && checked.setUp) findings.push(...(await checkCopilotHome(root, env)));
    if (agent === 'opencode' && checked.setUp) findings.push(...checkOpencode(env));
  }
  if (!anySetUp) {
    findings.push(
      problem(
        'agents',
        'no agent is set up for pulse in this project: nothing checks in, no hook holds a call',
        pulse(`setup <${SETUP_AGENTS.join('|')}> --write -p ${root}`),
      ),
    );
  }
  findings.push(...(await checkAgentTies(daemon)));
  findings.push(...(await checkSourcesTrust(paths, env)));
  findings.push(...(await checkGitIgnore(root, pulse(`init -p ${root}`))));
  findings.push(...(await checkSecurity(root, context.port, env)));
  return report(findings);
};

/** `pulse doctor` for people: a line per finding, each problem with its fix, and a verdict. */
export const formatDoctor = (report: DoctorReport): string => {
  const lines = [`pulse doctor: ${report.project}`, ''];
  for (const finding of report.findings) {
    lines.push(`${finding.ok ? 'ok ' : 'BAD'} ${finding.subject}: ${finding.message}`);
    if (finding.fix !== undefined) lines.push(`    fix: ${finding.fix}`);
  }
  const problems = report.findings.filter((finding) => !finding.ok).length;
  lines.push('', problems === 0 ? 'All good.' : `${problems} problem${problems === 1 ? '' : 's'} to fix.`);
  return lines.join('\n');
};
