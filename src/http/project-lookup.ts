import { sep } from 'node:path';
import { realProjectRoot } from '../store/project-id.js';

/** What the HTTP layer knows of a served project to find it by: its id and folder. */
export interface ProjectKey {
  id: string;
  root: string;
}

/** A project's URLs on this daemon, from the origin a request reached it at. */
export const projectUrls = (origin: string, id: string) => ({
  mcp: `${origin}/p/${id}/mcp`,
  status: `${origin}/p/${id}/status`,
  page: `${origin}/p/${id}/`,
  steer: `${origin}/p/${id}/steer`,
});

/** The served projects in one sentence: each id, folder and MCP URL. */
export const servedSentence = (origin: string, projects: readonly ProjectKey[]): string =>
  projects.length === 0
    ? 'This pulse serves no project now.'
    : `This pulse serves ${projects.length === 1 ? '1 project' : `${projects.length} projects`}: ${projects
        .map((p) => `${p.id} (${p.root}) at ${projectUrls(origin, p.id).mcp}`)
        .join('; ')}.`;

/** The project a `?project=` names: its id, or its folder (links followed). */
export const projectNamed = <P extends ProjectKey>(projects: Iterable<P>, name: string): P | undefined => {
  const list = [...projects];
  const byId = list.find((p) => p.id === name);
  if (byId !== undefined) return byId;
  const real = realProjectRoot(name);
  return list.find((p) => p.root === real || realProjectRoot(p.root) === real);
};

/** The served project a folder lies in, the innermost when projects nest. */
export const projectAround = <P extends ProjectKey>(projects: Iterable<P>, dir: string): P | undefined => {
  const real = realProjectRoot(dir);
  let best: P | undefined;
  let bestRoot = '';
  for (const p of projects) {
    const root = realProjectRoot(p.root);
    const inside = real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
    if (inside && root.length > bestRoot.length) {
      best = p;
      bestRoot = root;
    }
  }
  return best;
};

/** Why a request that named no project (or one not served) is not answered, with what is served. */
export type Unresolved = { status: 404 | 409; error: string };

/**
 * The project a request to an unprefixed route (`/mcp`, `/status`, …) is for: the one `?project=`
 * names, else the only one served. Several, or an unknown name, is an error naming what is served.
 */
export const resolveProject = <P extends ProjectKey>(
  projects: readonly P[],
  name: string | undefined,
  origin: string,
): P | Unresolved => {
  if (name !== undefined && name !== '') {
    const found = projectNamed(projects, name);
    if (found !== undefined) return found;
    return { status: 404, error: `No project "${name}" here. ${servedSentence(origin, projects)}` };
  }
  if (projects.length === 1) return projects[0]!;
  if (projects.length === 0) return { status: 404, error: servedSentence(origin, projects) };
  return {
    status: 409,
    error: `${servedSentence(origin, projects)} Use the project's own URL (\`pulse setup <agent> --write -p <dir>\` writes it), or add ?project=<id>.`,
  };
};
