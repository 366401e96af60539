import { readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, sep } from 'node:path';
import type { GateVerdict } from './codex-gates.js';
import { parseJsonObject } from './json-edit.js';

// Copilot CLI loads a project's hooks (.github/hooks/) and MCP servers (.mcp.json) only in a folder
// the user trusts; `copilot -p` skips both without a word otherwise. Trust lives in the user's
// `$COPILOT_HOME/config.json` (`trustedFolders`, a folder and everything below it). pulse reads it to
// say so, and never writes it: trusting is the user's decision.

/** Where Copilot keeps the user's config: `$COPILOT_HOME`, else `~/.copilot`. */
export const copilotHome = (env: NodeJS.ProcessEnv): string =>
  env.COPILOT_HOME || join(homedir(), '.copilot');

/** What Copilot will load of the project: its hooks and its MCP servers, and why. */
export interface CopilotGates {
  configFile: string;
  /** The project's real path, as Copilot compares it with the trusted folders. */
  folder: string;
  /** The trusted folder that covers the project (itself or a parent), if any. */
  trustedBy: string | null;
  /** Environment variables that open a gate on their own, whatever the config says. */
  env: { allowAll: boolean; repoHooks: boolean; workspaceMcp: boolean };
  /** The user's config.json could not be read or parsed: its trust could not be told. */
  problem?: string;
}

const isTrue = (value: string | undefined) => value?.trim().toLowerCase() === 'true';

/** Whether `folder` is `parent` or lies below it. */
const within = (parent: string, folder: string): boolean => {
  const rest = relative(parent, folder);
  return rest === '' || (rest !== '..' && !rest.startsWith(`..${sep}`) && !rest.startsWith(sep));
};

/** The trusted folders of the user's config: `trustedFolders`, and `trusted_folders`, which Copilot migrates from. */
const trustedFoldersOf = (doc: Record<string, unknown>): string[] =>
  [doc.trustedFolders, doc.trusted_folders]
    .flatMap((list) => (Array.isArray(list) ? list : []))
    .filter((entry): entry is string => typeof entry === 'string');

/** Reads, never writes, what Copilot's user config and environment say of the project. */
export const readCopilotGates = async (project: string, env: NodeJS.ProcessEnv): Promise<CopilotGates> => {
  const configFile = join(copilotHome(env), 'config.json');
  const folder = await realpath(project).catch(() => project);
  const gates: CopilotGates = {
    configFile,
    folder,
    trustedBy: null,
    env: {
      // Exactly "true" trusts the folder; Copilot's other truthy spellings only approve tools.
      allowAll: env.COPILOT_ALLOW_ALL === 'true',
      repoHooks: isTrue(env.GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS),
      workspaceMcp: isTrue(env.GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP),
    },
  };
  let text: string;
  try {
    text = await readFile(configFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return gates;
    return { ...gates, problem: `${configFile} cannot be read (${(error as NodeJS.ErrnoException).code})` };
  }
  const parsed = parseJsonObject(text);
  if ('problem' in parsed) return { ...gates, problem: `${configFile} ${parsed.problem}` };
  for (const entry of trustedFoldersOf(parsed.doc)) {
    const real = await realpath(entry).catch(() => entry);
    if (within(real, folder)) return { ...gates, trustedBy: entry };
  }
  return gates;
};

/** What the gates mean for pulse, in words: a closed gate with the exact step that opens it. */
export const copilotGateVerdicts = (gates: CopilotGates): GateVerdict[] => {
  const { folder, configFile, trustedBy } = gates;
  if (trustedBy !== null) {
    const how = trustedBy === folder ? folder : `${trustedBy}, which holds ${folder}`;
    return [
      {
        ok: true,
        message: `Copilot trusts ${how} (${configFile}): it loads pulse's hooks and MCP server there`,
      },
    ];
  }
  if (gates.env.allowAll || (gates.env.repoHooks && gates.env.workspaceMcp)) {
    return [
      {
        ok: true,
        message: `Copilot loads pulse's hooks and MCP server in ${folder} because this environment sets ${gates.env.allowAll ? 'COPILOT_ALLOW_ALL=true' : 'GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS and GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP'}; the folder itself is not trusted`,
      },
    ];
  }
  const why =
    gates.problem === undefined
      ? `Copilot does not trust ${folder}`
      : `cannot tell whether Copilot trusts ${folder}: ${gates.problem}`;
  const missing = gates.env.repoHooks
    ? 'its MCP server (.mcp.json)'
    : gates.env.workspaceMcp
      ? "pulse's hooks (.github/hooks/pulse.json)"
      : "pulse's hooks (.github/hooks/pulse.json) nor its MCP server (.mcp.json)";
  return [
    {
      ok: false,
      message: `${why}: \`copilot -p\` loads ${gates.env.repoHooks || gates.env.workspaceMcp ? 'not' : 'neither'} ${missing}, without a word, and interactive copilot asks first`,
      fix:
        gates.problem === undefined
          ? `Run copilot in ${folder} once and answer "Yes, and remember this folder for future sessions" (or add "${folder}" to trustedFolders in ${configFile}); pulse never trusts a folder for you. For one \`copilot -p\` run only: --trust-folder.`
          : `Fix ${configFile} (Copilot cannot read it either), then run this again.`,
    },
  ];
};
