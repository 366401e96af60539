import { ourDaemonOrigin } from '../hooks/find-daemon.js';
import { tokenHeaders, tokenRefusal } from '../store/daemon-token.js';
import { terminalText } from '../text/terminal-text.js';

/** One project a daemon serves, as `GET /projects` lists it. */
export interface ServedProjectStatus {
  id: string;
  root: string;
  mcp: string;
  page: string;
  replan: unknown;
  sessions: number;
  /** Its agents that still owe an ack (absent from an older daemon). */
  owing?: { agent: string; owes: string }[];
}

/** What `pulse status` without `-p` reports: the daemon and every project it serves. */
export interface ProjectList {
  daemon: { url: string; pid: number; version: string };
  projects: ServedProjectStatus[];
}

/**
 * The projects of this user's daemon (the one on `port` when named, else the one serving the
 * project around `cwd`, else the newest, as this user's daemon records say), or null when none
 * runs or answers.
 */
export const listServedProjects = async (
  cwd: string = process.cwd(),
  port?: number,
): Promise<ProjectList | null> => {
  const origin = ourDaemonOrigin(cwd, port);
  if (origin === null) return null;
  let response: Response;
  try {
    response = await fetch(new URL('/projects', origin), {
      headers: tokenHeaders(),
      signal: AbortSignal.timeout(2000),
    });
  } catch {
    return null;
  }
  if (response.status === 401) throw new Error(tokenRefusal(origin));
  if (!response.ok) return null;
  const body = (await response.json().catch(() => null)) as {
    name?: unknown;
    pid?: number;
    version?: string;
    projects?: ServedProjectStatus[];
  } | null;
  if (body?.name !== 'pulse-agent' || !Array.isArray(body.projects)) return null;
  return {
    daemon: { url: origin, pid: body.pid ?? 0, version: body.version ?? '' },
    projects: body.projects,
  };
};

const stateOf = (replan: unknown): string =>
  typeof replan === 'string' ? replan : JSON.stringify(replan ?? null).replace(/[{}"]/g, '');

/** `pulse status` without `-p`, for people: a line per project served. */
export const formatProjectList = ({ daemon, projects }: ProjectList): string =>
  [
    `pulse ${daemon.version} (pid ${daemon.pid}) at ${daemon.url} serves ${projects.length === 1 ? '1 project' : `${projects.length} projects`}${projects.length === 0 ? '.' : ':'}`,
    ...projects.flatMap((p) => [
      `  ${p.id}  ${terminalText(p.root)}: replan ${stateOf(p.replan)}, ${p.sessions} MCP session${p.sessions === 1 ? '' : 's'}, ${p.mcp}`,
      ...(p.owing ?? []).map((o) => terminalText(`    ${o.agent} owes ${o.owes}`)),
    ]),
    'One project in full: pulse status -p <dir>',
  ].join('\n');
