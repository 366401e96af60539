import { getConnInfo } from '@hono/node-server/conninfo';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { VERSION } from '../package/version.js';
import { isLoopbackHost } from './auth.js';

/** The header every pulse CLI request that adds or removes a project carries; no browser page can send it unasked. */
export const CLI_HEADER = 'x-pulse-cli';

/** What adding a project answers: where it is served, and the lines `pulse start` prints. */
export interface AddedProject {
  id: string;
  root: string;
  url: string;
  summary: string[];
}

/** How the daemon adds and removes projects; each rejects with a sentence the CLI prints. */
export interface ProjectControl {
  add(request: {
    root: string;
    logLevel?: string | undefined;
    /** Desktop notifications for it (`--notify`): an agent held this long is news. */
    notifyHeldAfterMs?: number | undefined;
  }): Promise<AddedProject>;
  remove(id: string): Promise<{ remaining: number }>;
}

/** Refused with its reason (a held lock, a folder that is not one, …): the CLI prints the message. */
export class ProjectRefusedError extends Error {
  override name = 'ProjectRefusedError';
}

const addSchema = z.object({
  project: z.string().min(1),
  log_level: z.string().optional(),
  notify_held_after_ms: z.number().int().positive().optional(),
});

/**
 * Only a pulse CLI on this machine: a loopback peer, no `Origin` (no browser page), our header, a
 * JSON body. The host guard and the token have run before.
 */
const cliOnly = (): MiddlewareHandler =>
  async function cliOnlyMiddleware(c, next) {
    const peer = getConnInfo(c).remote.address;
    if (peer === undefined || !isLoopbackHost(peer))
      return c.json({ error: 'Projects are added and removed from this machine only.' }, 403);
    if (c.req.header('origin') !== undefined || c.req.header(CLI_HEADER) !== '1')
      return c.json(
        { error: 'Projects are added and removed by the pulse CLI only (pulse start, pulse stop).' },
        403,
      );
    return next();
  };

/**
 * `/projects`: `GET` lists the projects served (id, folder, URLs); `POST {"project": "<dir>"}`
 * adds one (what `pulse start` sends when the port is this daemon's); `DELETE /projects/<id>`
 * removes one (`pulse stop`), and the daemon exits when none is left.
 */
export const projectsRoutes = ({
  control,
  served,
}: {
  control: ProjectControl | undefined;
  served: (c: Context) => unknown[];
}) => {
  const routes = new Hono();
  routes.get('/', (c) =>
    c.json({ name: 'pulse-agent', version: VERSION, pid: process.pid, projects: served(c) }),
  );
  const limit = bodyLimit({
    maxSize: 16 * 1024,
    onError: (c) => c.json({ error: 'The request is too large.' }, 413),
  });
  routes.post('/', cliOnly(), limit, async function addProject(c) {
    if (control === undefined) return c.json({ error: 'This daemon serves one project only.' }, 405);
    const body = addSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!body.success) return c.json({ error: 'Send JSON: {"project": "<dir>"}.' }, 400);
    try {
      const { project, log_level, notify_held_after_ms } = body.data;
      return c.json(
        await control.add({ root: project, logLevel: log_level, notifyHeldAfterMs: notify_held_after_ms }),
        201,
      );
    } catch (error) {
      return c.json({ error: (error as Error).message }, error instanceof ProjectRefusedError ? 409 : 500);
    }
  });
  routes.delete('/:id', cliOnly(), async function removeProject(c) {
    if (control === undefined) return c.json({ error: 'This daemon serves one project only.' }, 405);
    try {
      return c.json(await control.remove(c.req.param('id')), 200);
    } catch (error) {
      return c.json({ error: (error as Error).message }, error instanceof ProjectRefusedError ? 404 : 500);
    }
  });
  return routes;
};
