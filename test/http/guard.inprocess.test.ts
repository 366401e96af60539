import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEER_TOKEN_HEADER } from '../../src/http/auth.js';
import { peerAccessSentence, peerCheckAvailable, sameUserOnly } from '../../src/http/same-user.js';
import { type InProcessApp, inProcessApp } from './in-process-app.js';

/*
 * Who the HTTP layer answers, in process: the DNS-rebinding guard on Host, pulse's own page as
 * the only browser (Origin, Fetch Metadata, JSON bodies), the daemon's own user (the peer's uid,
 * faked here: the kernel's tables are test/security/other-user.test.ts), the token of a daemon
 * reachable beyond loopback (Bearer for the API, the page secret's cookie for the page), and the
 * status page's steer writes for its own origin only. The wire is test/e2e/http-surface.test.ts,
 * test/security/token.test.ts and test/security/browser.test.ts.
 */

const TOKEN = randomBytes(24).toString('hex');
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** Another local account's uid (nobody's on most systems). */
const OTHER_UID = 65534;
const errorOf = async (answer: Response) => ((await answer.json()) as { error: string }).error;

describe('the host guard', () => {
  let served: InProcessApp;
  beforeAll(async () => {
    served = await inProcessApp({ allowedHosts: ['pulse.lan'] });
  });
  afterAll(() => served.stop());
  const healthz = (headers: Record<string, string>) => served.request('/healthz', { headers });

  it('answers the loopback names on any port, and a host added with --allowed-host', async () => {
    for (const host of ['localhost:7777', '127.0.0.1:1', '[::1]:7777', 'LOCALHOST', 'pulse.lan:80']) {
      expect((await healthz({ host })).status, host).toBe(200);
    }
  });

  it('refuses a page that rebinds its own DNS name to this machine, naming the host', async () => {
    for (const host of ['evil.example:7777', 'pulse.lan.evil.example', '127.0.0.1.evil.example:7777']) {
      const refused = await healthz({ host });
      expect(refused.status, host).toBe(403);
      expect(await errorOf(refused)).toBe(
        `Host "${host}" is not allowed: pulse answers only on localhost, 127.0.0.1, [::1], pulse.lan.`,
      );
    }
  });

  it('refuses a JSON-RPC client in its own shape', async () => {
    const refused = await served.request('/mcp', {
      method: 'POST',
      headers: { host: 'evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: expect.stringContaining('Host "evil.example" is not allowed') },
      id: null,
    });
  });
});

/** Every route, as a page of another origin would try it (text/plain needs no preflight). */
const ROUTES: { path: string; method?: string; body?: string }[] = [
  { path: '/' },
  { path: '/healthz' },
  { path: '/status' },
  { path: '/status/stream' },
  { path: '/steer?file=guidance' },
  { path: '/projects' },
  { path: '/steer', method: 'POST', body: JSON.stringify({ file: 'guidance', text: 'x' }) },
  { path: '/mcp', method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
  { path: '/hook/claude/PreToolUse', method: 'POST', body: JSON.stringify({ session_id: 's' }) },
  { path: '/sources/test', method: 'POST', body: JSON.stringify({ source: 'cal' }) },
  { path: '/projects', method: 'POST', body: JSON.stringify({ project: '/tmp' }) },
];

/** The message a refusal carries, in the route's shape (JSON-RPC on /mcp). */
const messageOf = async (answer: Response) => {
  const body = (await answer.json()) as { error: string | { message: string } };
  return typeof body.error === 'string' ? body.error : body.error.message;
};

describe("only pulse's own page is a browser", () => {
  let served: InProcessApp;
  beforeAll(async () => {
    served = await inProcessApp();
  });
  afterAll(() => served.stop());
  const attempt = (route: (typeof ROUTES)[number], headers: Record<string, string>) =>
    served.request(route.path, {
      method: route.method ?? 'GET',
      headers: { 'content-type': 'application/json', ...headers },
      ...(route.body === undefined ? {} : { body: route.body }),
    });

  it('refuses an Origin other than its own on every route: another port, another host, null', async () => {
    const foreign = [
      'http://localhost:3000',
      'http://127.0.0.1:8765',
      'http://[::1]:8080',
      'https://localhost',
      'http://evil.example',
      'null',
      'not a url',
    ];
    for (const origin of foreign) {
      for (const route of ROUTES) {
        const refused = await attempt(route, { origin });
        const name = `${origin} ${route.method ?? 'GET'} ${route.path}`;
        expect(refused.status, name).toBe(403);
        expect(await messageOf(refused), name).toContain(
          `Origin "${origin}" is not pulse's own page (http://localhost): a page of another origin may not call pulse.`,
        );
      }
    }
  });

  it('refuses what another site makes a browser send, on every route, even without an Origin', async () => {
    for (const site of ['cross-site', 'same-site']) {
      for (const mode of ['no-cors', 'cors']) {
        for (const route of ROUTES) {
          const refused = await attempt(route, { 'sec-fetch-site': site, 'sec-fetch-mode': mode });
          const name = `${site} ${mode} ${route.method ?? 'GET'} ${route.path}`;
          expect(refused.status, name).toBe(403);
          expect(await messageOf(refused), name).toContain(
            `This request came from a page of another site (Sec-Fetch-Site: ${site})`,
          );
        }
      }
    }
  });

  it('lets a link from another site open the page, and nothing else', async () => {
    const navigate = (path: string, dest = 'document', method = 'GET') =>
      served.request(path, {
        method,
        headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': dest },
      });
    expect((await navigate('/')).status).toBe(200);
    expect((await navigate(`/p/${served.id}/`)).status).toBe(200);
    expect((await navigate('/status')).status, 'a navigation to the API').toBe(403);
    expect((await navigate('/status/stream')).status, 'a navigation to the stream').toBe(403);
    expect((await navigate('/', 'iframe')).status, 'the page in a frame').toBe(403);
    expect((await navigate('/', 'document', 'POST')).status, 'a form posted to the page').toBe(403);
  });

  it('answers its own page, a typed URL and clients that send no browser headers', async () => {
    for (const headers of <Record<string, string>[]>[
      { origin: 'http://localhost' },
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' },
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' },
      {},
    ]) {
      expect((await served.request('/healthz', { headers })).status, JSON.stringify(headers)).toBe(200);
    }
    // Its own origin as the request names it: another port is another origin, even on loopback.
    const tunnelled = await served.request('http://localhost:9000/healthz', {
      headers: { host: 'localhost:9000', origin: 'http://localhost:9000' },
    });
    expect(tunnelled.status).toBe(200);
  });

  it('refuses a body that is not JSON on every POST route with 415, and takes a charset', async () => {
    const posts = ROUTES.filter((r) => r.method === 'POST');
    for (const type of [
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      undefined,
    ]) {
      for (const route of posts) {
        const refused = await served.request(route.path, {
          method: 'POST',
          headers: type === undefined ? {} : { 'content-type': type },
          // Bytes: a string body would get text/plain from Request itself.
          body: new TextEncoder().encode(route.body),
        });
        const name = `${type} ${route.path}`;
        expect(refused.status, name).toBe(415);
        expect(await messageOf(refused), name).toBe(
          `pulse takes JSON here, and this request's Content-Type is ${type === undefined ? 'missing' : `"${type}"`}: send Content-Type: application/json.`,
        );
      }
    }
    const hook = await served.request('/hook/claude/PreToolUse', {
      method: 'POST',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      body: JSON.stringify({
        session_id: 's',
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: {},
      }),
    });
    expect(hook.status).toBe(200);
  });

  it('lets only its own origin steer guidance, with the token the page was served with', async () => {
    const page = await (await served.request('/')).text();
    const steerToken = /name="pulse-steer-token" content="([^"]+)"/.exec(page)![1]!;
    const steer = (origin: string, token = steerToken) =>
      served.request('/steer?file=guidance', { headers: { origin, [STEER_TOKEN_HEADER]: token } });
    expect((await steer('http://localhost:5173')).status).toBe(403);
    expect((await steer('http://localhost', 'not-the-page-token')).status).toBe(403);
    expect((await steer('http://localhost')).status).toBe(200);
  });
});

describe('the token of a daemon reachable beyond loopback', () => {
  let served: InProcessApp;
  beforeAll(async () => {
    served = await inProcessApp({ token: TOKEN });
  });
  afterAll(() => served.stop());

  /** The API routes, as their clients call them. */
  const API: { path: string; method?: string; headers?: Record<string, string>; body?: string }[] = [
    { path: '/healthz' },
    { path: '/status' },
    {
      path: '/mcp',
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    },
    {
      path: '/hook/claude/PreToolUse',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        session_id: 's',
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: {},
      }),
    },
  ];
  const call = (
    { path, headers, ...init }: (typeof API)[number],
    extra: Record<string, string>,
    peer?: string,
    uid?: number,
  ) =>
    served.request(path, {
      ...init,
      headers: { ...headers, ...extra },
      ...(peer ? { peer } : {}),
      ...(uid === undefined ? {} : { uid }),
    });

  it('refuses an API request without the token or with a wrong one, saying how to send it', async () => {
    for (const route of API) {
      for (const headers of [{}, bearer('wrong-token-0123456789abcdef')]) {
        const refused = await call(route, headers);
        expect(refused.status, `${route.path} ${JSON.stringify(headers)}`).toBe(401);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await refused.json()).toMatchObject({
          error: expect.stringMatching(/token/),
          fix: expect.stringContaining('Authorization: Bearer <token>'),
        });
      }
      const basic = await call(route, { authorization: `Basic ${TOKEN}` });
      expect(basic.status, route.path).toBe(400);
      expect(basic.headers.get('www-authenticate')).toBe('Bearer error="invalid_request"');
    }
  });

  it('answers every API route to the right Bearer token, from this machine or another', async () => {
    for (const route of API) {
      expect((await call(route, bearer(TOKEN))).status, route.path).toBe(200);
      const remote = await call(route, bearer(TOKEN), '192.0.2.7');
      expect(remote.status, `${route.path} from the LAN`).toBe(200);
    }
  });

  it('opens the page with ?token= once, through a cookie that the API does not take', async () => {
    expect((await served.request('/?token=not-the-token-at-all')).status).toBe(401);
    const opened = await served.request(`/?token=${TOKEN}`);
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/');
    const setCookie = opened.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(';')[0]!;
    expect(cookie.startsWith('pulse_page='), cookie).toBe(true);
    expect(setCookie, 'the cookie is a page secret, never the token').not.toContain(TOKEN);
    expect((await served.request('/', { headers: { cookie } })).status).toBe(200);
    for (const route of API) expect((await call(route, { cookie })).status, route.path).toBe(401);
    // A cookie holding the token itself (what pulse set before) opens nothing.
    expect((await served.request('/', { headers: { cookie: `pulse_page=${TOKEN}` } })).status).toBe(401);
    expect((await served.request('/', { headers: { cookie: `pulse_token=${TOKEN}` } })).status).toBe(401);
    // The cookie goes to every port of localhost: another account's server that reads it cannot use it.
    const elsewhere = await served.request('/', { headers: { cookie }, uid: OTHER_UID });
    expect(elsewhere.status).toBe(403);
    expect(await errorOf(elsewhere)).toContain(`this connection comes from uid ${OTHER_UID}`);
  });

  it('answers another account that holds the token, as it would a remote agent', async () => {
    for (const route of API) {
      expect((await call(route, bearer(TOKEN), undefined, OTHER_UID)).status, route.path).toBe(200);
      expect((await call(route, {}, undefined, OTHER_UID)).status, route.path).toBe(401);
    }
  });

  it('serves the page to this machine only, even with the right token', async () => {
    for (const path of ['/', '/status/stream']) {
      const refused = await served.request(path, { headers: bearer(TOKEN), peer: '192.0.2.7' });
      expect(refused.status, path).toBe(403);
      expect(await errorOf(refused)).toBe(
        'The status page is served to this machine only, not to 192.0.2.7.',
      );
    }
    expect((await served.request('/', { headers: bearer(TOKEN), peer: '::ffff:127.0.0.1' })).status).toBe(
      200,
    );
  });
});

describe('the daemon serves its own user', () => {
  let served: InProcessApp;
  beforeAll(async () => {
    served = await inProcessApp();
  });
  afterAll(() => served.stop());
  const own = process.getuid!();
  const account = userInfo().username;

  it('refuses a connection of another account on every route, naming both and the fix', async () => {
    for (const route of ROUTES) {
      const refused = await served.request(route.path, {
        method: route.method ?? 'GET',
        headers: { 'content-type': 'application/json' },
        body: route.body,
        uid: OTHER_UID,
      });
      const name = `${route.method ?? 'GET'} ${route.path}`;
      expect(refused.status, name).toBe(403);
      expect(await messageOf(refused), name).toBe(
        `This pulse daemon serves ${account} (uid ${own}); this connection comes from uid ${OTHER_UID}. Each user runs their own pulse: pulse start -p DIR --port <another port>.`,
      );
    }
  });

  it('refuses a connection whose owner the kernel cannot name (a socket already gone)', async () => {
    const refused = await served.request('/status', { uid: null });
    expect(refused.status).toBe(403);
    expect(await errorOf(refused)).toContain(
      'this connection comes from an account pulse cannot name (its socket is gone)',
    );
  });

  it('answers its own account on every route', async () => {
    expect((await served.request('/status', { uid: own })).status).toBe(200);
    expect((await served.request('/', { uid: own })).status).toBe(200);
  });

  it('asks the kernel once per connection, and lets everyone in where no platform can tell', async () => {
    const asked: object[] = [];
    const guarded = (available: boolean) =>
      new Hono()
        .use(
          sameUserOnly({
            available,
            owner: { uid: 1000, name: 'alice' },
            resolve: (socket) => {
              asked.push(socket);
              return 1001;
            },
          }),
        )
        .get('/', (c) => c.text('ok'));
    const socket = {};
    const app = guarded(true);
    for (let i = 0; i < 3; i++)
      expect((await app.request('/', {}, { incoming: { socket } })).status).toBe(403);
    expect(asked).toEqual([socket]);
    await app.request('/', {}, { incoming: { socket: {} } });
    expect(asked).toHaveLength(2);
    expect((await guarded(false).request('/', {}, { incoming: { socket } })).status).toBe(200);
    expect(asked, 'not asked where the platform cannot tell').toHaveLength(2);
  });

  it('says who may call it: its own user on Linux, every local account where the platform cannot tell', () => {
    expect(peerAccessSentence('linux')).toBe(
      `${account} (uid ${own}) only: a connection from another account on this machine is refused`,
    );
    expect(peerAccessSentence('darwin')).toBe(
      'other local accounts can reach this daemon: on macOS pulse cannot tell who opened a loopback connection; start with --token to close it',
    );
    expect(peerCheckAvailable('win32')).toBe(false);
  });
});
