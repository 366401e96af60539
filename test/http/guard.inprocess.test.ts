import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEER_TOKEN_HEADER } from '../../src/http/auth.js';
import { type InProcessApp, inProcessApp } from './in-process-app.js';

/*
 * Who the HTTP layer answers, in process: the DNS-rebinding guard on Host and Origin, the token
 * of a daemon reachable beyond loopback (Bearer for the API, a cookie for the page), and the
 * status page's steer writes for its own origin only. The wire is test/e2e/http-surface.test.ts
 * and test/security/token.test.ts.
 */

const TOKEN = randomBytes(24).toString('hex');
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const errorOf = async (answer: Response) => ((await answer.json()) as { error: string }).error;

describe('the host and origin guard', () => {
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

  it('refuses a foreign Origin, the null Origin and one that is not a URL, on every route', async () => {
    for (const origin of ['http://evil.example', 'null', 'not a url', 'http://localhost.evil.example']) {
      for (const path of ['/healthz', '/mcp', '/hook/claude/PreToolUse', '/']) {
        const refused = await served.request(path, { method: 'POST', headers: { origin } });
        expect(refused.status, `${origin} ${path}`).toBe(403);
        expect(await errorOf(refused)).toBe(
          `Origin "${origin}" is not allowed: only local pages may call pulse.`,
        );
      }
    }
  });

  it('lets a local page on any port read, but only its own origin steer guidance', async () => {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:1', 'http://[::1]:8080']) {
      expect((await healthz({ origin })).status, origin).toBe(200);
    }
    const page = await (await served.request('/')).text();
    const steerToken = /name="pulse-steer-token" content="([^"]+)"/.exec(page)![1]!;
    const steer = (origin: string) =>
      served.request('/steer?file=guidance', { headers: { origin, [STEER_TOKEN_HEADER]: steerToken } });
    const otherPort = await steer('http://localhost:5173');
    expect(otherPort.status).toBe(403);
    expect(await errorOf(otherPort)).toBe(
      "Only pulse's own status page (http://localhost) may change guidance or constraints; this request came from a page at http://localhost:5173.",
    );
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
  const API = [
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
  ) => served.request(path, { ...init, headers: { ...headers, ...extra }, ...(peer ? { peer } : {}) });

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
    expect((await served.request('/', { headers: { cookie } })).status).toBe(200);
    for (const route of API) expect((await call(route, { cookie })).status, route.path).toBe(401);
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
