import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { PulseActor } from '../../machines/pulse.js';
import { announceCodeWarm } from '../daemon/code-warm.js';
import type { ContextWatch } from '../mcp/context-push.js';
import type { SamplingClients } from '../mcp/sampling-clients.js';
import { VERSION } from '../package/version.js';
import { logOf, replanOf } from '../system/ask-actors.js';
import { healthProblems } from '../system/health-problems.js';
import { systemStatus, watcherWarning } from '../system/system-status.js';
import { loopbackPeersOnly, requireToken } from './auth.js';
import type { ConnectionCounts } from './connection-shedding.js';
import { createHookRoute } from './hook-route.js';
import { hostGuard } from './host-guard.js';
import type { McpRoute } from './mcp-route.js';
import type { SessionLimits } from './session-table.js';
import { createSourcesTestRoute } from './sources-test-route.js';
import { STATUS_PAGE_HEADERS, statusPage } from './status-page/page.js';
import { createStatusStream } from './status-stream.js';

/** After the first /mcp request, when the bundle's code cache is worth writing (src/daemon/code-warm.ts). */
const CODE_WARM_AFTER_MS = 1000;

/**
 * The daemon's HTTP surface: `/mcp`, `/healthz` for scripts, `/status` and `/sources/test` for
 * the CLI, `/` for people.
 */
export const createHttpApp = ({
  actor,
  projectRoot,
  token,
  allowedHosts = [],
  sessionLimits,
  connections = () => null,
  samplers,
}: {
  actor: PulseActor;
  projectRoot: string;
  /** When set, every request needs it (see `requireToken`). */
  token?: string | undefined;
  /** Host names answered beside the loopback ones (a non-loopback bind). */
  allowedHosts?: string[];
  /** How many MCP sessions are kept, and how long unused. */
  sessionLimits?: SessionLimits;
  /** The server's connection counts, for `/healthz`; null when not counted. */
  connections?: () => ConnectionCounts | null;
  /** Where sessions whose client can sample are kept, for the sampling thinker. */
  samplers?: SamplingClients;
}) => {
  const watches = new Set<ContextWatch>();
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
      ([{ createMcpRoute }, { createMcpServer }]) => {
        // A client's first requests (initialize, a tool call) have run by then.
        setTimeout(announceCodeWarm, CODE_WARM_AFTER_MS).unref();
        mcp = createMcpRoute(
          () => createMcpServer({ actor, watches, samplers }),
          sessionLimits,
          sessionsChanged,
        );
        return mcp;
      },
    ));
  const sessions = () => mcp?.sessions() ?? [];
  const statusStream = createStatusStream({
    actor,
    sessions,
    onSessionsChange: (listener) => {
      sessionListeners.add(listener);
      return () => sessionListeners.delete(listener);
    },
  });
  const app = new Hono();
  app.use('*', hostGuard({ extraHosts: allowedHosts }));
  if (token !== undefined) app.use('*', requireToken({ token }));
  for (const path of ['/', '/status/stream']) app.use(path, loopbackPeersOnly());
  app.get('/healthz', function health(c) {
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
        project: projectRoot,
        events: log.context.index.size,
        replan: replan.value,
        sessions: mcp?.sessionCount ?? 0,
        push_watches: watches.size,
        connections: connections(),
        error: log.context.lastError ?? problems[0] ?? null,
        problems,
        watcher,
      },
      ok ? 200 : 503,
    );
  });
  app.get('/status', function status(c) {
    return c.json(systemStatus(actor, sessions()));
  });
  app.get('/status/stream', statusStream.handle);
  app.get('/', function page(c) {
    return c.html(
      statusPage({ project: projectRoot, version: VERSION, status: systemStatus(actor, sessions()) }),
      200,
      STATUS_PAGE_HEADERS,
    );
  });
  app.all('/mcp', async function mcpRequest(c) {
    return (await mcpRoute()).handle(c);
  });
  app.post('/hook/:agent/:event', ...createHookRoute(actor, projectRoot));
  app.post('/sources/test', ...createSourcesTestRoute(actor));
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
      { error: `No route ${c.req.method} ${c.req.path}. The MCP endpoint is /mcp; the status page is /.` },
      404,
    ),
  );
  return { app, closeSessions: async () => (await loading)?.close() };
};
