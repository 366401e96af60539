import { readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { GateVerdict } from './codex-gates.js';
import { isJsonObject, parseJsonObject } from './json-edit.js';

// Gemini CLI loads a project's `.gemini/settings.json` (pulse's server and hooks) only in a folder the
// user trusted: a rule of `~/.gemini/trustedFolders.json` that the "Trust folder" dialog writes.
// pulse reads the rules to say where trust stands, and never writes them: trusting is the user's decision.

/** What Gemini will make of the project's folder: trusted, distrusted, no rule yet, or trust switched off. */
export interface GeminiGates {
  trustFile: string;
  /** The real path of the project: Gemini matches rules against real paths. */
  folder: string;
  trust: 'trusted' | 'distrusted' | 'unset' | 'off' | 'env-trusted' | 'env-distrusted';
  /** The rule that decides (`<path>: <level>`), when one does. */
  rule?: string;
  /** Where trust was switched off (`security.folderTrust.enabled: false`). */
  settingsFile?: string;
  /** A file Gemini cannot read either: it refuses to start until it is fixed. */
  problem?: string;
}

const LEVELS = new Set(['TRUST_FOLDER', 'TRUST_PARENT', 'DO_NOT_TRUST']);

/** Gemini's own home: `$GEMINI_CLI_HOME`, else the user's. */
const geminiHome = (env: NodeJS.ProcessEnv): string => env.GEMINI_CLI_HOME || env.HOME || homedir();

const realOrSame = (path: string) => realpath(path).catch(() => path);

const isInside = (folder: string, path: string) => {
  const inside = relative(folder, path);
  return inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside));
};

/** A JSON object file of the user's, or null when missing; a problem when Gemini could not read it either. */
const readJsonFile = async (file: string) => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { doc: null };
    return { problem: `${file} cannot be read (${(error as NodeJS.ErrnoException).code})` };
  }
  const parsed = parseJsonObject(text);
  return 'doc' in parsed ? parsed : { problem: `${file} ${parsed.problem}` };
};

/**
 * The rule that decides a folder, as Gemini 0.61 picks it: every rule whose folder (a TRUST_PARENT
 * rule's parent) holds the real path, the longest rule path winning.
 */
const decidingRule = async (rules: Record<string, unknown>, folder: string) => {
  let best: { path: string; level: string } | undefined;
  for (const [path, level] of Object.entries(rules)) {
    if (typeof level !== 'string' || !LEVELS.has(level)) continue;
    const effective = await realOrSame(level === 'TRUST_PARENT' ? dirname(path) : path);
    if (isInside(effective, folder) && (best === undefined || path.length > best.path.length)) {
      best = { path, level };
    }
  }
  return best;
};

/** Reads, never writes, what Gemini's user files say of trusting this project's folder. */
export const readGeminiGates = async (project: string, env: NodeJS.ProcessEnv): Promise<GeminiGates> => {
  const home = join(geminiHome(env), '.gemini');
  const trustFile = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || join(home, 'trustedFolders.json');
  const folder = await realOrSame(resolve(project));
  const gates = { trustFile, folder };
  if (env.GEMINI_RESTRICTED_MODE === 'true' || env.GEMINI_CLI_TRUST_WORKSPACE === 'false') {
    return { ...gates, trust: 'env-distrusted' };
  }
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return { ...gates, trust: 'env-trusted' };
  const settingsFile = join(home, 'settings.json');
  const settings = await readJsonFile(settingsFile);
  if ('problem' in settings) return { ...gates, trust: 'unset', problem: settings.problem };
  const security = isJsonObject(settings.doc?.security) ? settings.doc.security : {};
  if (isJsonObject(security.folderTrust) && security.folderTrust.enabled === false) {
    return { ...gates, trust: 'off', settingsFile };
  }
  const rules = await readJsonFile(trustFile);
  if ('problem' in rules) return { ...gates, trust: 'unset', problem: rules.problem };
  const bad = Object.entries(rules.doc ?? {}).find(
    ([, level]) => typeof level !== 'string' || !LEVELS.has(level),
  );
  if (bad !== undefined) {
    return {
      ...gates,
      trust: 'unset',
      problem: `${trustFile} gives "${bad[0]}" the trust level ${JSON.stringify(bad[1])}, which Gemini does not know`,
    };
  }
  const rule = await decidingRule(rules.doc ?? {}, folder);
  if (rule === undefined) return { ...gates, trust: 'unset' };
  return {
    ...gates,
    trust: rule.level === 'DO_NOT_TRUST' ? 'distrusted' : 'trusted',
    rule: `"${rule.path}": ${rule.level}`,
  };
};

const TRUST_STEP = (folder: string) =>
  `Run gemini in ${folder} once and choose "Trust folder" (in CI: GEMINI_CLI_TRUST_WORKSPACE=true in gemini's environment); pulse never trusts a folder for you. Never --skip-trust: it runs without .gemini/settings.json, so without pulse`;

/** What the trust gate means for pulse, in words: closed, with the exact step that opens it, or open. */
export const geminiGateVerdicts = (gates: GeminiGates): GateVerdict[] => {
  const { folder, trustFile } = gates;
  if (gates.problem !== undefined) {
    return [
      {
        ok: false,
        message: `cannot tell whether Gemini trusts ${folder}: ${gates.problem}; Gemini refuses to start until it is fixed`,
        fix: 'Fix the file (Gemini cannot read it either), then run this again.',
      },
    ];
  }
  switch (gates.trust) {
    case 'trusted':
      return [{ ok: true, message: `Gemini trusts ${folder} (${gates.rule} in ${trustFile})` }];
    case 'off':
      return [
        {
          ok: true,
          message: `folder trust is off in ${gates.settingsFile}: Gemini loads .gemini/settings.json in every folder`,
        },
      ];
    case 'env-trusted':
      return [
        {
          ok: true,
          message: `GEMINI_CLI_TRUST_WORKSPACE=true here: a gemini started from this environment trusts ${folder}`,
        },
      ];
    case 'env-distrusted':
      return [
        {
          ok: false,
          message: `GEMINI_CLI_TRUST_WORKSPACE=false or GEMINI_RESTRICTED_MODE=true here: a gemini started from this environment ignores .gemini/settings.json (pulse's server and hooks)`,
          fix: 'Unset it in the environment gemini runs in.',
        },
      ];
    case 'distrusted':
      return [
        {
          ok: false,
          message: `${trustFile} marks ${folder} untrusted (${gates.rule}): gemini -p exits 55 there, and the interactive gemini ignores .gemini/settings.json (pulse's server and hooks)`,
          fix: `If you trust it, run /permissions trust in gemini there, or change that rule to TRUST_FOLDER in ${trustFile}; pulse never does that for you.`,
        },
      ];
    default:
      return [
        {
          ok: false,
          message: `Gemini does not trust ${folder} yet: gemini -p exits 55 there ("not running in a trusted directory"), and the interactive gemini asks first; untrusted, it loads no .gemini/settings.json (pulse's server and hooks)`,
          fix: `${TRUST_STEP(folder)}.`,
        },
      ];
  }
};
