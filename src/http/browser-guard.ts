import type { MiddlewareHandler } from 'hono';
import { type GuardCheck, guardMiddleware } from './guards.js';
import { refuse } from './refusal.js';

/** The HTML pages a link from elsewhere may open: the daemon's `/` and a project's `/p/<id>/`. */
const PAGE_DOCUMENT = /^(?:\/|\/p\/[^/]+\/?)$/;

/** What `Sec-Fetch-Site` says of a request another site's page made (`localhost:3000` → `localhost:8765` is same-site). */
const FROM_ANOTHER_SITE = new Set(['cross-site', 'same-site']);

/**
 * Only pulse's own page is a browser: a request whose `Origin` is not the origin it was sent to
 * (another port is another origin; `null` is nobody's) is refused on every route, and so is one
 * whose Fetch Metadata says another site's page made it, except a top-level navigation to a page
 * (a link may open the page; it cannot act). Browsers send these headers themselves, a page
 * cannot forge them; the CLI, curl and agents send neither.
 */
export const browserCheck = (): GuardCheck =>
  function browserGuardCheck(c) {
    const origin = c.req.header('origin');
    const site = c.req.header('sec-fetch-site');
    // Neither header: not a browser's request (the CLI, curl, agents), nothing to compare.
    if (origin === undefined && site === undefined) return undefined;
    const own = new URL(c.req.url).origin;
    if (origin !== undefined && origin !== own) {
      return refuse(
        c,
        403,
        `Origin "${origin}" is not pulse's own page (${own}): a page of another origin may not call pulse.`,
        { fix: `Open pulse's page at ${own}/ itself.` },
      );
    }
    if (site !== undefined && FROM_ANOTHER_SITE.has(site) && !isNavigationToPage(c.req)) {
      return refuse(
        c,
        403,
        `This request came from a page of another site (Sec-Fetch-Site: ${site}): only pulse's own page (${own}) may call pulse.`,
        { fix: `Open pulse's page at ${own}/ itself.` },
      );
    }
    return undefined;
  };

/** `browserCheck` as a middleware of its own. */
export const browserGuard = (): MiddlewareHandler => guardMiddleware(browserCheck());

const isNavigationToPage = (req: {
  method: string;
  path: string;
  header(name: string): string | undefined;
}) =>
  req.method === 'GET' &&
  req.header('sec-fetch-mode') === 'navigate' &&
  (req.header('sec-fetch-dest') ?? 'document') === 'document' &&
  PAGE_DOCUMENT.test(req.path);

/** Whether a Content-Type names JSON (`application/json`, any parameters such as `charset`). */
export const isJsonType = (contentType: string | undefined): boolean =>
  contentType === 'application/json' ||
  (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json';

/**
 * Every POST route takes JSON, and only JSON: any other body (a form, `text/plain`, which a page
 * of any origin may send without asking first) is refused with 415 before any route reads it.
 */
export const jsonBodiesCheck = (): GuardCheck =>
  function jsonBodiesOnlyCheck(c) {
    if (c.req.method !== 'POST') return undefined;
    const type = c.req.header('content-type');
    if (isJsonType(type)) return undefined;
    return refuse(
      c,
      415,
      `pulse takes JSON here, and this request's Content-Type is ${type === undefined ? 'missing' : `"${type}"`}: send Content-Type: application/json.`,
    );
  };

/** `jsonBodiesCheck` as a middleware of its own. */
export const jsonBodiesOnly = (): MiddlewareHandler => guardMiddleware(jsonBodiesCheck());
