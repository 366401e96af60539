import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PULSE_FILES } from '../../machines/pulse-files.js';
import { peerAccessSentence, peerCheckAvailable } from '../http/same-user.js';
import { listenerUids } from '../os/socket-owner.js';
import { privateFolderProblem, userStateDir } from '../os/user-state.js';
import { type Finding, holds, problem } from './finding.js';

/** Agent configs that projects usually commit: a secret written in one is shared with everyone who clones it. */
const COMMITTED_CONFIGS = [
  '.mcp.json',
  '.codex/config.toml',
  '.codex/hooks.json',
  '.gemini/settings.json',
  '.cursor/mcp.json',
  '.cursor/hooks.json',
  '.vscode/mcp.json',
  '.github/hooks/pulse.json',
  'opencode.json',
  'opencode.jsonc',
];

/** A config this big is no agent config; it is not read whole to look for a token. */
const CONFIG_READ_LIMIT = 1024 * 1024;

/** `Bearer <secret>` written out; a variable (`$PULSE_TOKEN`, `${PULSE_TOKEN:-}`, `{env:PULSE_TOKEN}`) starts with a character no token has. */
const LITERAL_BEARER = /Bearer\s+[A-Za-z0-9._~+/-]{16,}=*/;

/** Others may write it: the world-write bit, on a file or a folder without the sticky bit. */
const writableByOthers = (mode: number, isFolder: boolean) =>
  (mode & 0o002) !== 0 && !(isFolder && (mode & 0o1000) !== 0);

/**
 * Folders and files through which another local account could steer this user's agents:
 * the project, `.pulse/` and the four protocol files, when anyone may write them.
 */
const openToOthers = async (project: string): Promise<string[]> => {
  const paths = [
    project,
    join(project, '.pulse'),
    ...PULSE_FILES.map((name) => join(project, '.pulse', name)),
  ];
  const open: string[] = [];
  for (const path of paths) {
    const stats = await lstat(path).catch(() => null);
    if (stats !== null && writableByOthers(stats.mode, stats.isDirectory())) open.push(path);
  }
  return open;
};

/** The committed agent configs that carry a token itself (or the value of PULSE_TOKEN) instead of a variable. */
const configsWithSecrets = async (project: string, env: NodeJS.ProcessEnv): Promise<string[]> => {
  const found: string[] = [];
  for (const file of COMMITTED_CONFIGS) {
    const path = join(project, file);
    const stats = await lstat(path).catch(() => null);
    if (stats === null || !stats.isFile() || stats.size > CONFIG_READ_LIMIT) continue;
    const text = await readFile(path, 'utf8').catch(() => '');
    const token = env.PULSE_TOKEN;
    if (LITERAL_BEARER.test(text) || (token !== undefined && token.length > 0 && text.includes(token)))
      found.push(file);
  }
  return found;
};

/** The uid of another account listening on the loopback port, or null (none, ours, or a system that does not say). */
const otherListener = (port: number): number | null => {
  if (port === 0) return null;
  const own = process.getuid?.();
  if (own === undefined) return null;
  const uids = [...(listenerUids('127.0.0.1', port) ?? []), ...(listenerUids('::1', port) ?? [])];
  return uids.find((uid) => uid !== own) ?? null;
};

/**
 * What `pulse doctor` says of the set-up's safety: another account holding the agents' port, a
 * system where other accounts reach the daemon unless it has a token, files other accounts may
 * rewrite, a token written into a config that is usually committed, and pulse's own state folder
 * being this user's alone. Each problem names the path and the exact fix.
 */
export const checkSecurity = async (
  project: string,
  port: number,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<Finding[]> => {
  const findings: Finding[] = [];
  const squatter = otherListener(port);
  if (squatter !== null) {
    findings.push(
      problem(
        'security',
        `port ${port}, where your agents' hooks and MCP entry point, is held by another account (uid ${squatter}): they would send it your hook inputs and take its answers`,
        `Find it (ss -ltnp 'sport = :${port}') and have it stopped, or move pulse and your agents to another port: pulse setup <agent> --write --port <N>`,
      ),
    );
  }
  if (!peerCheckAvailable(platform) && !env.PULSE_TOKEN) {
    findings.push(
      problem(
        'security',
        peerAccessSentence(platform),
        'PULSE_TOKEN=$(openssl rand -hex 32) in your shell profile, then restart pulse and your agents: pulse setup writes the header that sends it',
      ),
    );
  }
  const open = await openToOthers(project);
  findings.push(
    open.length === 0
      ? holds('security', 'no other account on this machine may write the project, .pulse/ or its files')
      : problem(
          'security',
          `other accounts on this machine may write ${open.join(', ')}, and so steer your agents`,
          `chmod o-w ${open.map((path) => `"${path}"`).join(' ')}`,
        ),
  );
  const secrets = await configsWithSecrets(project, env);
  if (secrets.length > 0) {
    findings.push(
      problem(
        'security',
        `${secrets.join(', ')} ${secrets.length === 1 ? 'holds' : 'hold'} a token written out, in a file that is usually committed`,
        'Send the variable PULSE_TOKEN there instead, as pulse setup writes it (`pulse setup <agent> --write --force`), and change the token: everyone with the file has it',
      ),
    );
  }
  const state = userStateDir(env);
  const stateProblem = privateFolderProblem(state);
  // A state folder not made yet is fine: pulse makes it, 0700, when it first needs it.
  if (stateProblem !== null && (await lstat(state).catch(() => null)) !== null) {
    findings.push(
      problem(
        'security',
        `pulse's state folder (which daemons run, which sources.json you trusted) is unsafe: ${stateProblem}`,
        `Make it a folder of yours that only you may write: chmod 700 "${state}"`,
      ),
    );
  }
  return findings;
};
