import { createHash, timingSafeEqual } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { getCookie, setCookie } from 'hono/cookie';
import { type GuardCheck, guardMiddleware } from './guards.js';

/** Shorter tokens are refused: guessable over a LAN. */
export const MIN_TOKEN_LENGTH = 16;
/** What an `Authorization: Bearer` value may hold (RFC 6750's token68, as Hono checks it). */
const TOKEN_CHARACTERS = /^[A-Za-z0-9._~+/-]+=*$/;
/**
 * The status page's cookie, holding the page secret (never the token): a browser cannot put a
 * Bearer header on an EventSource, and a cookie for localhost goes to every port on it.
 */
export const PAGE_COOKIE = 'pulse_page';
/** The GET routes a browser tab opens itself; only these take the cookie or `?token=`. */
const PAGE_ROUTE = /^(?:\/p\/[^/]+)?\/(?:status\/stream)?$/;

/** The header the status page sends its steer token in; a page of another origin cannot read the token to send it. */
export const STEER_TOKEN_HEADER = 'x-pulse-steer-token';
/** What the status page sends to steer (it also carries the page's own token and Origin, see steer-route.ts). */
const STEER_ROUTE = /^(?:\/p\/[^/]+)?\/steer$/;

/** The status page and its stream, of the daemon (`/`) or of one project (`/p/<id>/`). */
export const isPageRoute = (path: string): boolean => PAGE_ROUTE.test(path);

/** A token or host that `pulse start` refuses; the message says what to do, never the token. */
export class TokenPolicyError extends Error {
  override name = 'TokenPolicyError';
}

/** Whether binding `host` keeps the daemon reachable from this machine only. */
export const isLoopbackHost = (host: string): boolean => {
  const name = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/^::ffff:/, '');
  return name === 'localhost' || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
};

/**
 * The status page and its stream are for the person at this machine: a request from any other
 * address gets 403, token or not (a daemon bound beyond loopback serves MCP and hooks there).
 */
export const loopbackPeersCheck = (): GuardCheck =>
  function loopbackPeersCheck(c) {
    const peer = getConnInfo(c).remote.address;
    if (peer !== undefined && isLoopbackHost(peer)) return undefined;
    return c.json(
      {
        error: `The status page is served to this machine only, not to ${peer ?? 'an unknown address'}.`,
        fix: 'Open it on the machine running pulse (or through an SSH tunnel to 127.0.0.1); GET /status gives the same as JSON with the token.',
      },
      403,
    );
  };

/** `loopbackPeersCheck` as a middleware of its own. */
export const loopbackPeersOnly = (): MiddlewareHandler => guardMiddleware(loopbackPeersCheck());

/**
 * Refuses a start that would let others in: a non-loopback `host` without a token, or a token
 * too short or with characters a Bearer header cannot carry.
 */
export const checkTokenPolicy = (host: string, token: string | undefined): void => {
  if (token === undefined || token === '') {
    if (isLoopbackHost(host)) return;
    throw new TokenPolicyError(
      `Refusing to listen on ${host} without a token: anyone who can reach it could steer your agent. ` +
        `Set PULSE_TOKEN (or --token) to a secret of at least ${MIN_TOKEN_LENGTH} characters, e.g. PULSE_TOKEN=$(openssl rand -hex 32), ` +
        'and give clients the same PULSE_TOKEN; or listen on 127.0.0.1 only (the default).',
    );
  }
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new TokenPolicyError(
      `The token is too short (${token.length} characters; at least ${MIN_TOKEN_LENGTH}). Use e.g. PULSE_TOKEN=$(openssl rand -hex 32).`,
    );
  }
  if (!TOKEN_CHARACTERS.test(token)) {
    throw new TokenPolicyError(
      'The token has characters an Authorization: Bearer header cannot carry: use letters, digits and . _ ~ + / - (hex or base64), e.g. PULSE_TOKEN=$(openssl rand -hex 32).',
    );
  }
};

const digest = (text: string) => createHash('sha256').update(text).digest();

/** A constant-time comparison with `token` (hashed first, so the length leaks nothing either). */
export const tokenMatcher = (token: string) => {
  const expected = digest(token);
  return (candidate: string | undefined): boolean =>
    candidate !== undefined && timingSafeEqual(expected, digest(candidate));
};

const refusal = (error: string) => ({
  error,
  fix: 'Send Authorization: Bearer <token>, the PULSE_TOKEN the daemon was started with. In a browser, open /?token=<token> once.',
});

/**
 * Every request needs `Authorization: Bearer <token>` (401 with `WWW-Authenticate: Bearer`
 * otherwise). The status page is the exception a browser needs: `GET /?token=…` sets an
 * HttpOnly, SameSite=Strict cookie holding `pageSecret` (a secret of this daemon's start, never
 * the token: a cookie for localhost goes to every port of it) and redirects to `/`; that cookie is
 * taken on `/` and `/status/stream` only (and a project's `/p/<id>/` ones), and on `/steer` for
 * the page's own writes (which the steer route checks further), never on `/mcp`, `/hook` or
 * `/status`; and only from a browser of the daemon's own user (`pageOwner`).
 */
export const requireToken = ({
  token,
  pageSecret,
  pageOwner = async (_c, next) => next(),
}: {
  token: string;
  pageSecret: string;
  /** What a request carrying the page's cookie must pass beside it (`sameUserOnly`). */
  pageOwner?: MiddlewareHandler;
}): MiddlewareHandler => {
  const matches = tokenMatcher(token);
  const pageMatches = tokenMatcher(pageSecret);
  const bearer = bearerAuth({
    verifyToken: (candidate) => matches(candidate),
    noAuthenticationHeader: { message: refusal('This pulse daemon requires a token.') },
    invalidAuthenticationHeader: { message: refusal('The Authorization header is not "Bearer <token>".') },
    invalidToken: { message: refusal('The token is wrong.') },
  });
  return async function requireTokenMiddleware(c, next) {
    if (c.req.method === 'GET' && isPageRoute(c.req.path)) {
      const query = c.req.query('token');
      if (!c.req.path.endsWith('/status/stream') && matches(query)) {
        setCookie(c, PAGE_COOKIE, pageSecret, { httpOnly: true, sameSite: 'Strict', path: '/' });
        return c.redirect(c.req.path, 303);
      }
      if (pageMatches(getCookie(c, PAGE_COOKIE))) return pageOwner(c, next);
    }
    const fromPage = c.req.header(STEER_TOKEN_HEADER) !== undefined;
    if (STEER_ROUTE.test(c.req.path) && fromPage && pageMatches(getCookie(c, PAGE_COOKIE)))
      return pageOwner(c, next);
    return bearer(c, next);
  };
};
