import { randomBytes } from 'node:crypto';
import { type Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { PulseActor } from '../../machines/pulse.js';
import type { ContextWatch } from '../mcp/context-push.js';
import { announceCodeWarm } from '../package/code-warm.js';
import { VERSION } from '../package/version.js';
import { projectId } from '../store/project-id.js';
import { logOf, replanOf } from '../system/ask-actors.js';
import { healthNotices, healthProblems } from '../system/health-problems.js';
import { owingAgents, systemStatus, watcherWarning } from '../system/read-status.js';
import type { SessionLimits } from '../system/session-table.js';
import type { SamplingClients } from '../thinkers/sampling-clients.js';
import { isPageRoute, loopbackPeersCheck, requireToken, tokenMatcher } from './auth.js';
import { browserCheck, jsonBodiesCheck } from './browser-guard.js';
import type { ConnectionCounts } from './connection-shedding.js';
import { type GuardCheck, guardMiddleware, guardsInOrder, thenMiddleware } from './guards.js';
import { createHookRoute } from './hook-route.js';
import { hostCheck } from './host-guard.js';
import type { McpRoute } from './mcp-route.js';
import { createOpenings } from './opening.js';
import { projectUrls, resolveProject, servedSentence, type Unresolved } from './project-lookup.js';
import { type ProjectControl, projectsRoutes } from './projects-route.js';
import { rpcRefusal } from './refusal.js';
import { kernelPeerUid, type PeerUidResolver, sameUserCheck } from './same-user.js';
import { createSourcesTestRoute, sourcesTestLimit } from './sources-test-route.js';
import { projectsPage, STATUS_PAGE_HEADERS, statusPage } from './status-page/page.js';
import { createStatusStream } from './status-stream.js';
import { createSteerRoute, steerLimit } from './steer-route.js';

/** After the first /mcp request, when the bundle's code cache is worth writing (src/package/code-warm.ts). */
const CODE_WARM_AFTER_MS = 1000;

/** The status page and its stream are served to loopback peers only, token or not. */
const pagesOnLoopback = (): GuardCheck => {
  const loopbackOnly = loopbackPeersCheck();
  return (c) => (c.req.method === 'GET' && isPageRoute(c.req.path) ? loopbackOnly(c) : undefined);
};

/** One project as the HTTP layer serves it: its id, folder, root actor, and its clients that can sample. */
export interface AppProject {
  id: string;
  root: string;
  actor: PulseActor;
  samplers?: SamplingClients | undefined;
}

interface Surface {
  project: AppProject;
  statusStream: ReturnType<typeof createStatusStream>;
  sourcesTest: ReturnType<typeof createSourcesTestRoute>;
  steer: ReturnType<typeof createSteerRoute>;
}

type Handler = (c: Context, surface: Surface) => Response | Promise<Response>;

/**
 * The daemon's HTTP surface for every project it serves: per project under `/p/<id>/` (`mcp`,
 * `healthz`, `status`, `status/stream`, `sources/test`, the page), the same unprefixed while one is
 * served (or for `?project=`), `/hook/:agent/:event` routed by its project, and `/projects` (the
 * list; adding and removing, for the CLI only). Sessions, push watches and limits are daemon-wide.
 * A request for a project still `opening` waits until it is attached (`src/http/opening.ts`).
 */
export const createDaemonApp = ({
  token,
  allowedHosts = [],
  sessionLimits,
  connections = () => null,
  control,
  peerUid = kernelPeerUid,
}: {
  /** When set, every request needs it (see `requireToken`). */
  token?: string | undefined;
  /** Host names answered beside the loopback ones (a non-loopback bind). */
  allowedHosts?: string[];
  /** How many MCP sessions are kept, and how long unused. */
  sessionLimits?: SessionLimits;
  /** The server's connection counts, for `/healthz`; null when not counted. */
  connections?: () => ConnectionCounts | null;
  /** Adds and removes projects for `POST /projects` and `DELETE /projects/:id`; none: refused. */
  control?: ProjectControl;
  /** Who opened a connection (the kernel's socket tables); a test passes its own. */
  peerUid?: PeerUidResolver;
}) => {
  const watches = new Set<ContextWatch>();
  const surfaces = new Map<string, Surface>();
  const list = () => [...surfaces.values()].map((s) => s.project);
  const openings = createOpenings({ servedCount: () => surfaces.size });
  // The MCP SDK and the tools' schemas load at the first /mcp request: hooks, the status page and
  // /healthz never need them, and a daemon nobody has connected to yet does not hold them.
  let mcp: McpRoute | null = null;
  let loading: Promise<McpRoute> | null = null;
  const sessionListeners = new Set<() => void>();
  const sessionsChanged = () => {
    for (const listener of sessionListeners) listener();
  };
  const mcpRoute = () =>
    (loading ??= Promise.all([import('./mcp-route.js'), import('../mcp/server.js')]).then(
      ([{ createMcpRoute }, { createMcpServer, watchForListeners }]) => {
        // A client's first requests (initialize, a tool call) have run by then.
        setTimeout(announceCodeWarm, CODE_WARM_AFTER_MS).unref();
        const served = (id: string) => {
          const project = surfaces.get(id)?.project;
          if (project === undefined) throw new Error(`Project ${id} is no longer served.`);
          return project;
        };
        mcp = createMcpRoute(
          {
            legacy: (id) => {
              const { actor, samplers } = served(id);
              return createMcpServer({ actor, watches, samplers });
            },
            modern: (id) => createMcpServer({ actor: served(id).actor, era: 'modern' }),
            watch: (id, notify) => watchForListeners(served(id).actor, notify, watches),
          },
          sessionLimits,
          sessionsChanged,
        );
        return mcp;
      },
    ));
  const sessionsOf = (id: string) => mcp?.sessions(id) ?? [];
  // The status pages of this daemon carry it; a write from a page must send it back (a page of another origin cannot read it).
  const steerToken = randomBytes(24).toString('base64url');
  const steerTokenMatches = tokenMatcher(steerToken);
  // The page's cookie, set by `/?token=` on a daemon with a token: a secret of its own, never the token.
  const pageSecret = randomBytes(24).toString('base64url');
  const httpFacts = (project: AppProject) => ({
    sessions: sessionsOf(project.id),
    sampler: project.samplers?.latest()?.client ?? null,
  });

  const attach = (project: AppProject): void => {
    surfaces.set(project.id, {
      project,
      statusStream: createStatusStream({
        actor: project.actor,
        facts: () => httpFacts(project),
        onSessionsChange: (listener) => {
          sessionListeners.add(listener);
          return () => sessionListeners.delete(listener);
        },
      }),
      sourcesTest: createSourcesTestRoute(project.actor),
      steer: createSteerRoute({
        project,
        facts: () => httpFacts(project),
        steerToken: steerTokenMatches,
      }),
    });
    openings.opened(project.id);
  };
  /** Stops serving a project: its routes answer 404 from now on, and its MCP sessions are closed. */
  const detach = async (id: string): Promise<void> => {
    surfaces.delete(id);
    await mcp?.close(id);
  };

  const origin = (c: Context) => new URL(c.req.url).origin;
  const served = (c: Context) =>
    list().map((p) => ({
      id: p.id,
      root: p.root,
      page: projectUrls(origin(c), p.id).page,
      owing: owingAgents(p.actor),
    }));
  const refuse = (c: Context, unresolved: Unresolved) =>
    c.json({ error: unresolved.error, projects: served(c) }, unresolved.status);

  const health = (c: Context, { project }: Surface) => {
    const { actor } = project;
    const log = logOf(actor).getSnapshot();
    const replan = replanOf(actor).getSnapshot();
    const problems = healthProblems(actor);
    const watcher = watcherWarning(actor);
    const ok = !log.matches('failed') && problems.length === 0;
    return c.json(
      {
        ok,
        name: 'pulse-agent',
        version: VERSION,
        project: project.root,
        project_id: project.id,
        events: log.context.index.size,
        replan: replan.value,
        sessions: mcp?.sessionCount(project.id) ?? 0,
        push_watches: watches.size,
        connections: connections(),
        error: log.context.lastError ?? problems[0] ?? null,
        problems,
        notices: healthNotices(actor),
        watcher,
      },
      ok ? 200 : 503,
    );
  };
  const page = (c: Context, { project }: Surface) =>
    c.html(
      statusPage({
        project: project.root,
        version: VERSION,
        status: systemStatus(project.actor, httpFacts(project)),
        served: served(c),
        mcpUrl: projectUrls(origin(c), project.id).mcp,
        steerToken,
      }),
      200,
      STATUS_PAGE_HEADERS,
    );

  const routes: [method: 'GET' | 'POST' | 'ALL', path: string, handler: Handler][] = [
    ['GET', '/healthz', health],
    ['GET', '/status', (c, s) => c.json(systemStatus(s.project.actor, httpFacts(s.project)))],
    ['GET', '/status/stream', (c, s) => s.statusStream.handle(c)],
    ['POST', '/sources/test', (c, s) => s.sourcesTest[1](c)],
    ['POST', '/steer', (c, s) => s.steer.write(c)],
    ['GET', '/steer', (c, s) => s.steer.read(c)],
    // Loaded: straight on, without waiting on the settled load once per call.
    [
      'ALL',
      '/mcp',
      (c, s) =>
        mcp === null
          ? mcpRoute().then((route) => route.handle(c, s.project.id))
          : mcp.handle(c, s.project.id),
    ],
  ];
  // A refusal in the form the route's client reads: JSON-RPC for MCP clients, JSON otherwise.
  const refusal = (path: string, c: Context, unresolved: Unresolved) =>
    path === '/mcp' ? rpcRefusal(unresolved.status, unresolved.error) : refuse(c, unresolved);
  const byId = (path: string, handler: Handler) =>
    async function projectRoute(c: Context) {
      const surface = surfaces.get(c.req.param('id') ?? '');
      if (surface === undefined) {
        return refusal(path, c, {
          status: 404,
          error: `No project "${c.req.param('id')}" here. ${servedSentence(origin(c), list())}`,
        });
      }
      return handler(c, surface);
    };
  const unprefixed = (path: string, handler: Handler) =>
    async function legacyRoute(c: Context) {
      const found = resolveProject(list(), c.req.query('project'), origin(c));
      if ('status' in found) return refusal(path, c, found);
      return handler(c, surfaces.get(found.id)!);
    };

  const app = new Hono();
  // The guards in this order, as one middleware (src/http/guards.ts): Host, browser, who is
  // calling (the daemon's own user, by the kernel's word; with a token, whoever holds it: a
  // remote agent, another account given it, and the page's cookie only from the user's own
  // browser), JSON bodies only, the page to loopback peers only; past them, only the user's own
  // requests are held while a project opens.
  const ownUser = sameUserCheck({ resolve: peerUid });
  const afterCaller = guardsInOrder([jsonBodiesCheck(), pagesOnLoopback()], openings.untilOpened);
  const browserAndHost = [hostCheck({ extraHosts: allowedHosts }), browserCheck()];
  app.use(
    '*',
    token === undefined
      ? guardsInOrder([...browserAndHost, ownUser], afterCaller)
      : guardsInOrder(
          browserAndHost,
          thenMiddleware(
            requireToken({ token, pageSecret, pageOwner: guardMiddleware(ownUser) }),
            afterCaller,
          ),
        ),
  );
  // Before the per-project routes, whose sources-test body limit would read a /projects body.
  app.route(
    '/projects',
    projectsRoutes({
      control,
      served: (c) =>
        list().map((p) => ({
          id: p.id,
          root: p.root,
          ...projectUrls(origin(c), p.id),
          replan: replanOf(p.actor).getSnapshot().value,
          sessions: mcp?.sessionCount(p.id) ?? 0,
          owing: owingAgents(p.actor),
        })),
    }),
  );
  app.use('/sources/test', sourcesTestLimit);
  app.use('/p/:id/sources/test', sourcesTestLimit);
  app.use('/steer', steerLimit);
  app.use('/p/:id/steer', steerLimit);
  for (const [method, path, handler] of routes) {
    for (const [route, serve] of [
      [`/p/:id${path}`, byId(path, handler)],
      [path, unprefixed(path, handler)],
    ] as const) {
      if (method === 'ALL') app.all(route, serve);
      else app.on(method, route, serve);
    }
  }
  app.get('/p/:id', (c) => c.redirect(`/p/${c.req.param('id')}/`, 301));
  app.get('/p/:id/', byId('/', page));
  app.get('/', function home(c) {
    const found = resolveProject(list(), c.req.query('project'), origin(c));
    if (!('status' in found)) return page(c, surfaces.get(found.id)!);
    return c.html(projectsPage({ version: VERSION, served: served(c) }), 200, STATUS_PAGE_HEADERS);
  });
  app.post('/hook/:agent/:event', ...createHookRoute(list));
  app.onError(function requestFailed(error, c) {
    if (error instanceof HTTPException) return error.getResponse();
    // A request cut short (the client left, or a timeout closed it) has no one to answer.
    const gone = (error as NodeJS.ErrnoException).code === 'ECONNRESET' || c.req.raw.signal.aborted;
    if (!gone) console.error(error);
    return c.json(
      { error: gone ? 'The request was cut short.' : 'Internal server error.' },
      gone ? 400 : 500,
    );
  });
  app.notFound((c) =>
    c.json(
      {
        error: `No route ${c.req.method} ${c.req.path}. Each project's MCP endpoint is /p/<id>/mcp (GET /projects lists them); the status page is /.`,
      },
      404,
    ),
  );
  return {
    app,
    /** Marks a project as opening: requests for it wait until it is attached, or the returned function gives up. */
    opening: openings.opening,
    attach,
    detach,
    /** The projects served, in the order they were added. */
    projects: list,
    closeSessions: async () => (await loading)?.close(),
  };
};

/**
 * One project's HTTP surface (what a test or a one-project embedding needs): the daemon's app
 * with `projectRoot` served, under its id and unprefixed.
 */
export const createHttpApp = ({
  actor,
  projectRoot,
  samplers,
  ...options
}: Omit<Parameters<typeof createDaemonApp>[0], 'control'> & {
  actor: PulseActor;
  projectRoot: string;
  /** Where sessions whose client can sample are kept, for the sampling thinker. */
  samplers?: SamplingClients;
}) => {
  const daemon = createDaemonApp(options);
  daemon.attach({ id: projectId(projectRoot), root: projectRoot, actor, samplers });
  return daemon;
};
