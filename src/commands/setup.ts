import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { findProgram } from '../os/find-program.js';
import { DEFAULT_PORT } from '../package/defaults.js';
import { pulse, pulseCommand, shellWord } from '../package/pulse-command.js';
import type { SetupAgent } from '../setup/agent-names.js';
import type { PartName } from '../setup/agent-parts.js';
import { agentSetup, setupDialectOf } from '../setup/agents.js';
import { writePlanned } from '../setup/apply.js';
import { type GateVerdict, gateVerdicts, readCodexGates } from '../setup/codex-gates.js';
import { copilotGateVerdicts, readCopilotGates } from '../setup/copilot-gates.js';
import { geminiGateVerdicts, readGeminiGates } from '../setup/gemini-gates.js';
import { currentRuntime, type HookRuntime, type HookTransport } from '../setup/hook-handlers.js';
import { type PlannedFile, planSetup, writtenLater } from '../setup/plan.js';
import { projectId } from '../store/project-id.js';
import { ProjectFolderError } from '../store/pulse-folder.js';

/** The default port of `pulse start`, which agents are pointed at unless `--port` says otherwise. */

export interface SetupOptions {
  agent: SetupAgent;
  project: string;
  port?: number;
  write?: boolean;
  force?: boolean;
  /** How the hooks reach the daemon; by default `http` for Claude Code, else `curl` where there is one. */
  hooks?: HookTransport;
  /** The agent's session-start hook starts the daemon when none answers. */
  autostart?: boolean;
  runtime?: HookRuntime;
  /** Where Codex's, Gemini's and Copilot's user files are found (`CODEX_HOME`, `GEMINI_CLI_HOME`, `COPILOT_HOME`). */
  env?: NodeJS.ProcessEnv;
}

export type FileStatus = 'created' | 'changed' | 'unchanged' | 'conflict' | 'invalid';

/** One file of the setup: what happened to it (or, without --write, what would). */
export interface SetupFileReport {
  part: PartName;
  file: string;
  status: FileStatus;
  backup?: string;
  replaced?: string;
  problem?: string;
  fix?: string;
}

/** What `pulse setup` printed or did; `--json` prints this. */
export interface SetupResult {
  agent: SetupAgent;
  title: string;
  project: string;
  url: string;
  /** How the hooks reach the daemon (none for VS Code). */
  hooks: HookTransport | null;
  /** The three parts as pulse would write them into missing files. */
  parts: Array<{ part: PartName; file: string; why?: string; snippet: string }>;
  files: SetupFileReport[];
  notes: string[];
  /** What the agent itself still holds back (Codex: trust, hook review; Gemini and Copilot: folder trust), with the user's step for each. */
  gates: GateVerdict[];
  /** `write` with --write, else `preview`: nothing is written. */
  mode: 'preview' | 'write';
  /** Whether files were written: --write, and no refusal. */
  written: boolean;
  /** A file was in conflict or could not be edited, so nothing was (or would be) written. */
  refused: boolean;
  already_set_up: boolean;
}

/** `pulse setup` was given options it cannot use. */
export class SetupUsageError extends Error {
  override name = 'SetupUsageError';
}

const statusOf = ({ outcome, existed }: PlannedFile): FileStatus =>
  outcome.kind === 'write' ? (existed ? 'changed' : 'created') : outcome.kind;

const reportOf = (planned: PlannedFile): SetupFileReport => {
  const { outcome } = planned;
  return {
    part: planned.part,
    file: planned.file,
    status: statusOf(planned),
    ...(outcome.kind === 'write' && outcome.replaced ? { replaced: outcome.replaced } : {}),
    ...(outcome.kind === 'conflict' || outcome.kind === 'invalid'
      ? { problem: outcome.problem, fix: outcome.fix }
      : {}),
  };
};

/** The command line a user reruns with --force, with the options they gave. */
const forceCommandOf = ({ agent, project, port, hooks, autostart }: SetupOptions) =>
  [
    pulse(`setup ${agent}`),
    project === '.' ? '' : ` -p ${project}`,
    port === undefined ? '' : ` --port ${port}`,
    hooks === undefined ? '' : ` --hooks ${hooks}`,
    autostart ? ' --autostart' : '',
    ' --write --force',
  ].join('');

/**
 * The first way the agent runs hooks that works here: Claude Code posts them itself; a command
 * hook runs curl with a POSIX shell (a fraction of a Node start) where there is one, else `pulse
 * hook` forwards (Windows, a machine with no curl).
 */
export const defaultTransport = (agent: SetupAgent, platform = process.platform): HookTransport => {
  const transports = setupDialectOf(agent).hooks?.transports ?? ['curl'];
  const curl = platform !== 'win32' && findProgram('curl') !== null;
  return transports.find((transport) => transport !== 'curl' || curl) ?? 'node';
};

/** What the agent itself holds back in this project (Codex: trust, hook review; Copilot: folder trust). */
const gatesOf = async (
  agent: SetupAgent,
  project: string,
  env: NodeJS.ProcessEnv,
): Promise<GateVerdict[]> => {
  if (agent === 'codex') return gateVerdicts(await readCodexGates(project, env));
  if (agent === 'gemini') return geminiGateVerdicts(await readGeminiGates(project, env));
  if (agent === 'copilot') return copilotGateVerdicts(await readCopilotGates(project, env));
  return [];
};

/**
 * Prints (or with `write`, merges into the project's files) an agent's MCP server entry, hooks and
 * instructions. Every file is read and checked first; if any is in conflict or cannot be edited,
 * nothing is written.
 */
export const runSetup = async (options: SetupOptions): Promise<SetupResult> => {
  const port = options.port ?? DEFAULT_PORT;
  if (port === 0) {
    throw new SetupUsageError(
      '--port 0 picks a free port when the daemon starts, so no agent can be pointed at it. Pass the port `pulse start` serves on.',
    );
  }
  const project = resolve(options.project);
  if (
    !(await stat(project).then(
      (info) => info.isDirectory(),
      () => false,
    ))
  ) {
    throw new ProjectFolderError(
      `Project folder ${project} does not exist. Create it, or pass an existing folder with --project DIR.`,
    );
  }
  // The project's own endpoint: one daemon may serve several projects.
  const url = `http://127.0.0.1:${port}/p/${projectId(project)}/mcp`;
  const dialect = setupDialectOf(options.agent);
  const transport = options.hooks ?? defaultTransport(options.agent);
  const { hooks } = dialect;
  const plugin = hooks !== undefined && !('layout' in hooks);
  if (plugin && transport !== 'plugin') {
    throw new SetupUsageError(
      `${dialect.title} has no command hooks: pulse's plugin (${hooks.file}) posts them to the daemon itself, so there is no --hooks ${transport}: leave out --hooks.`,
    );
  }
  if (hooks !== undefined && !(hooks.transports as readonly HookTransport[]).includes(transport)) {
    throw new SetupUsageError(
      `${dialect.title} runs hooks by ${hooks.transports.join(' or ')}, not ${transport}: use ${hooks.transports.map((t) => `--hooks ${t}`).join(' or ')}.`,
    );
  }
  if (hooks === undefined && options.hooks !== undefined) {
    throw new SetupUsageError(`${dialect.title} gets no hooks from pulse: leave out --hooks.`);
  }
  const autostart = options.autostart === true;
  if (autostart && (hooks === undefined || !('layout' in hooks) || hooks.autostartEvent === undefined)) {
    const none = 'so nothing can start pulse with it';
    const why =
      hooks === undefined
        ? `${dialect.title} gets no hooks, ${none}`
        : plugin
          ? `pulse's ${dialect.title} plugin runs inside ${dialect.title} and starts no program, ${none}`
          : (('noAutostart' in hooks ? hooks.noAutostart : undefined) ??
            `${dialect.title} runs no hook when a session starts, ${none}`);
    throw new SetupUsageError(
      `${why}: start the daemon yourself with \`${pulse(`start --detach -p ${shellWord(project)}${port === DEFAULT_PORT ? '' : ` --port ${port}`}`)}\` (it returns once it serves).`,
    );
  }
  const runtime = options.runtime ?? currentRuntime();
  const setup = agentSetup(options.agent, {
    url,
    port,
    project,
    runtime,
    transport,
    pulse: pulseCommand({ anywhere: true }),
    autostart,
  });
  const editOptions = { force: options.force === true, forceCommand: forceCommandOf(options) };
  const parts = setup.parts.map(({ part, file, why, edit }) => {
    const preview = edit(null, editOptions);
    return { part, file, ...(why ? { why } : {}), snippet: preview.kind === 'write' ? preview.text : '' };
  });
  const plan = await planSetup(project, setup.parts, editOptions);
  const files = plan.map(reportOf);
  const refused = files.some((file) => file.status === 'conflict' || file.status === 'invalid');
  const written = options.write === true && !refused;
  if (written) {
    const done: string[] = [];
    for (const [index, planned] of plan.entries()) {
      if (planned.outcome.kind !== 'write' || writtenLater(plan, index)) continue;
      try {
        const backup = await writePlanned(project, { ...planned, outcome: planned.outcome });
        if (backup) files[index]!.backup = backup;
      } catch (error) {
        throw new Error(
          `Could not write ${planned.path} (${(error as Error).message}). Written before it: ${done.join(', ') || 'nothing'}.`,
        );
      }
      done.push(planned.file);
    }
  }
  const gates = (await gatesOf(options.agent, project, options.env ?? process.env)).filter(
    (gate) => !gate.ok,
  );
  return {
    agent: setup.agent,
    title: setup.title,
    project,
    url,
    hooks: setup.parts.some((part) => part.part === 'hooks') ? transport : null,
    parts,
    files,
    notes: setup.notes,
    gates,
    mode: options.write === true ? 'write' : 'preview',
    written,
    refused,
    already_set_up: files.every((file) => file.status === 'unchanged'),
  };
};
