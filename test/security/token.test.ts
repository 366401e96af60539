import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withoutToken } from '../../src/daemon/detach.js';
import { runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { daemonRecord } from '../support/daemon-record.js';
import { save } from '../support/files.js';
import { trackStarted } from '../support/started.js';
import { mcpCall, send } from './http.js';

/*
 * A daemon reachable beyond loopback, end to end: `pulse start --host 0.0.0.0` refuses to run
 * without a token, and with one every route wants `Authorization: Bearer`; the Host guard still
 * holds; the status page is for this machine only; the CLI's clients send PULSE_TOKEN.
 */

const TOKEN = randomBytes(24).toString('hex');

const started = trackStarted();

afterEach(started.cleanUp);

const newProject = async () => {
  const project = await tempProject('pulse-token-');
  started.projects.push(project);
  return project;
};

const start = async (project: string, args: string[], env: Record<string, string> = {}) => {
  const daemon = await startDaemon(project, { args, env });
  started.daemons.push(daemon);
  return daemon;
};

/** This machine's first non-loopback IPv4 address: what another machine on the LAN would call. */
const lanAddress = (): string | undefined =>
  Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Every route of the daemon, as the clients that use it call it. */
const ROUTES = [
  { name: 'POST /mcp', path: '/mcp', ...mcpCall('tools/list') },
  { name: 'GET /', path: '/' },
  { name: 'GET /status', path: '/status' },
  { name: 'GET /status/stream', path: '/status/stream' },
  { name: 'GET /healthz', path: '/healthz' },
  {
    name: 'POST /hook/claude/PreToolUse',
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
  {
    name: 'POST /sources/test',
    path: '/sources/test',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'none-configured' }),
    // Let in, it names the source it does not know.
    allowedStatus: 404,
  },
  { name: 'GET /nowhere', path: '/nowhere' },
];

const call = (base: string, route: (typeof ROUTES)[number], headers: Record<string, string> = {}) =>
  send(new URL(route.path, base).href, {
    ...(route.method ? { method: route.method } : {}),
    headers: { ...route.headers, ...headers },
    ...(route.body ? { body: route.body } : {}),
  });

describe('pulse start beyond loopback', () => {
  it('refuses a non-loopback --host without a token, or with a short one, and writes nothing', async () => {
    const project = await newProject();
    const start = (args: string[], env: Record<string, string> = {}) =>
      runCli(['start', '-p', project, '--port', '0', ...args], { env });
    const hosts = ['0.0.0.0', '::', lanAddress() ?? '192.0.2.1'];
    const short = 'short-s3cret';
    // Each start is a Node process of its own: run them side by side.
    const [noToken, shortFlag, shortEnv, spaced] = await Promise.all([
      Promise.all(hosts.map((host) => start(['--host', host], { PULSE_TOKEN: '' }))),
      start(['--host', '0.0.0.0', '--token', short]),
      start(['--host', '0.0.0.0'], { PULSE_TOKEN: short }),
      start(['--token', 'a token with spaces in it']),
    ]);
    noToken.forEach((refused, i) => {
      expect(refused.code, hosts[i]).toBe(1);
      expect(refused.stderr).toContain(`Refusing to listen on ${hosts[i]} without a token`);
      expect(refused.stderr).toContain('PULSE_TOKEN');
    });
    for (const refused of [shortFlag, shortEnv]) {
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('The token is too short (12 characters; at least 16)');
      expect(refused.stdout + refused.stderr).not.toContain(short);
    }
    expect(spaced.code).toBe(1);
    expect(spaced.stderr).toContain('characters an Authorization: Bearer header cannot carry');
    expect(existsSync(join(project, '.pulse')), 'a refused start creates nothing').toBe(false);
  }, 60_000);

  it('with a token, answers every route only to the right Bearer token, 401 with WWW-Authenticate otherwise', async () => {
    const project = await newProject();
    const daemon = await start(project, ['--host', '0.0.0.0'], { PULSE_TOKEN: TOKEN });
    expect(daemon.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/p\/[\w.-]+\/mcp$/);
    const base = daemon.url;
    for (const route of ROUTES) {
      for (const headers of [{}, bearer('wrong-token-0123456789abcdef')]) {
        const answer = await call(base, route, headers);
        expect(answer.status, `${route.name} with ${JSON.stringify(headers)}`).toBe(401);
        expect(answer.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(JSON.parse(answer.body)).toMatchObject({ error: expect.stringMatching(/token/) });
      }
      // Not a Bearer header at all: RFC 6750's invalid_request.
      const basic = await call(base, route, { authorization: `Basic ${TOKEN}` });
      expect(basic.status, route.name).toBe(400);
      expect(basic.headers['www-authenticate']).toBe('Bearer error="invalid_request"');
      expect(JSON.parse(basic.body).error).toContain('not "Bearer <token>"');
      const allowed = await call(base, route, bearer(TOKEN));
      expect(allowed.status, `${route.name} with the token`).toBe(
        route.allowedStatus ?? (route.path === '/nowhere' ? 404 : 200),
      );
    }
    // The token is never printed nor written anywhere; the daemon record says one is needed.
    const discovery = JSON.stringify(daemonRecord(project));
    expect(JSON.parse(discovery)).toMatchObject({ token_required: true, host: '0.0.0.0' });
    expect(discovery).not.toContain(TOKEN);
    expect(daemon.output()).not.toContain(TOKEN);
    expect(await readFile(join(project, '.pulse', 'pulse.log'), 'utf8')).not.toContain(TOKEN);
  });

  it('keeps the Host guard: loopback names, the bound and interface addresses, --allowed-host; nothing else', async () => {
    const project = await newProject();
    const daemon = await start(project, ['--host', '0.0.0.0', '--allowed-host', 'pulse.lan'], {
      PULSE_TOKEN: TOKEN,
    });
    const healthz = (host: string, origin?: string) =>
      send(new URL('/healthz', daemon.url).href, {
        headers: { host, ...bearer(TOKEN), ...(origin ? { origin } : {}) },
      });
    const port = daemon.port;
    const lan = lanAddress();
    for (const host of ['127.0.0.1', 'localhost', '0.0.0.0', 'pulse.lan', ...(lan ? [lan] : [])]) {
      expect((await healthz(`${host}:${port}`)).status, host).toBe(200);
    }
    for (const host of ['evil.example', 'pulse.lan.evil.example', '127.0.0.1.evil.example']) {
      const refused = await healthz(`${host}:${port}`);
      expect(refused.status, host).toBe(403);
      expect(JSON.parse(refused.body).error).toContain(`Host "${host}:${port}" is not allowed`);
    }
    expect((await healthz(`127.0.0.1:${port}`, 'http://evil.example')).status).toBe(403);
  });

  it('serves the status page to a browser on this machine through a cookie, and to no other address', async () => {
    const project = await newProject();
    const daemon = await start(project, ['--host', '0.0.0.0'], { PULSE_TOKEN: TOKEN });
    const local = `http://127.0.0.1:${daemon.port}`;
    const wrong = await send(`${local}/?token=not-the-token-at-all`);
    expect(wrong.status).toBe(401);
    const opened = await send(`${local}/?token=${TOKEN}`);
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/');
    const setCookie = String(opened.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(';')[0]!;
    const page = await send(`${local}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    // The page's script is built by esbuild, which prints strings in double quotes.
    expect(page.body).toContain('new EventSource("status/stream")');
    const stream = await send(`${local}/status/stream`, { headers: { cookie } });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    // The cookie opens the page only: not MCP, the hook route or /status.
    for (const route of ROUTES.filter((r) =>
      ['/mcp', '/hook/claude/PreToolUse', '/status'].includes(r.path),
    )) {
      expect((await call(local, route, { cookie })).status, route.name).toBe(401);
    }

    const lan = lanAddress();
    if (lan === undefined) return;
    // Over the LAN, with the token: MCP answers, the page and its stream do not.
    const remote = `http://${lan}:${daemon.port}`;
    expect((await call(remote, ROUTES[0]!, bearer(TOKEN))).status).toBe(200);
    for (const path of ['/', '/status/stream']) {
      const refused = await send(`${remote}${path}`, { headers: bearer(TOKEN) });
      expect(refused.status, path).toBe(403);
      expect(JSON.parse(refused.body).error).toContain('served to this machine only');
    }
  });

  it('the CLI clients send PULSE_TOKEN, and say to set it when they lack it', async () => {
    const project = await newProject();
    const daemon = await start(project, ['--host', '0.0.0.0'], { PULSE_TOKEN: TOKEN });
    // The CLI reaches a daemon bound to every address on loopback, as its record says.
    const local = daemon.url.replace('//0.0.0.0:', '//127.0.0.1:');
    const withToken = { env: { PULSE_TOKEN: TOKEN } };
    const without = { env: { PULSE_TOKEN: '' } as Record<string, string> };

    const status = await runCli(['status', '-p', project, '--json'], withToken);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).daemon).toMatchObject({ running: true, url: local });
    const refused = await runCli(['status', '-p', project], without);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the daemon at ${local} requires a token: set PULSE_TOKEN`);
    const wrong = await runCli(['sources', 'list', '-p', project], { env: { PULSE_TOKEN: 'x'.repeat(32) } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused PULSE_TOKEN');
    expect(wrong.stderr).not.toContain('x'.repeat(32));
    const untested = await runCli(['sources', 'test', 'cal', '-p', project], without);
    expect(untested.code).toBe(1);
    expect(untested.stderr, 'refused, not tested here instead').toContain(
      `the daemon at ${local} requires a token: set PULSE_TOKEN`,
    );
    const sources = await runCli(['sources', 'list', '-p', project, '--json'], withToken);
    expect(sources.code, sources.stderr).toBe(0);
    expect(JSON.parse(sources.stdout).running).toBe(true);
    const focus = await runCli(['focus', '45m', '-p', project, '--json'], withToken);
    expect(focus.code, focus.stderr).toBe(0);
    expect(JSON.parse(focus.stdout).daemon.picked_up).toBe(true);

    // The hook holds a tool call while a replan is pending only if the daemon answered it.
    await save(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nStop.\n');
    await waitUntil(
      async () =>
        JSON.parse((await runCli(['status', '-p', project, '--json'], withToken)).stdout).needs_replan,
      { describe: () => 'a pending replan' },
    );
    const input = JSON.stringify({
      session_id: 's1',
      cwd: project,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf build' },
      tool_use_id: 'toolu_1',
    });
    const held = await runCli(['hook', 'claude', '-p', project], { ...withToken, input });
    expect(held.code).toBe(0);
    expect(JSON.parse(held.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    const open = await runCli(['hook', 'claude', '-p', project], { ...without, input });
    expect(open.code).toBe(0);
    expect(open.stderr).toContain('requires a token: set PULSE_TOKEN');
  }, 60_000);

  it('also requires the token on loopback when one is given', async () => {
    const project = await newProject();
    const daemon = await start(project, ['--token', TOKEN]);
    expect(daemon.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    expect((await call(daemon.url, ROUTES[0]!)).status).toBe(401);
    expect((await call(daemon.url, ROUTES[0]!, bearer(TOKEN))).status).toBe(200);
    expect(daemon.output()).not.toContain(TOKEN);
  });
});

describe('a token given on the command line', () => {
  it('reaches the detached daemon through its environment, never its argv', async () => {
    const project = await newProject();
    const started_ = await runCli(['start', '--detach', '-p', project, '--port', '0', '--token', TOKEN], {
      env: { PULSE_TOKEN: '' },
    });
    expect(started_.code, started_.stderr).toBe(0);
    const pid = Number(/\(pid (\d+)\)/.exec(started_.stdout)![1]);
    try {
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      expect(argv).toContain('start');
      expect(argv.join(' ')).not.toContain(TOKEN);
      expect((await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0')).toContain(`PULSE_TOKEN=${TOKEN}`);
      const url = /MCP endpoint: (\S+)/.exec(started_.stdout)![1]!;
      expect((await call(url, ROUTES[0]!)).status, 'the daemon requires it').toBe(401);
      expect((await call(url, ROUTES[0]!, bearer(TOKEN))).status).toBe(200);
    } finally {
      await runCli(['stop', '-p', project], { env: { PULSE_TOKEN: TOKEN } });
    }
  });

  it('is taken out of the arguments in either form, and nothing past --', () => {
    expect(withoutToken(['-p', 'x', '--token', 'secret-secret-secret', '--port', '0'])).toEqual([
      '-p',
      'x',
      '--port',
      '0',
    ]);
    expect(withoutToken(['--token=secret-secret-secret', '--notify'])).toEqual(['--notify']);
    expect(withoutToken(['--', '--token', 'x'])).toEqual(['--', '--token', 'x']);
  });
});

describe('what stays on this machine', () => {
  it('binds the inspector relay to 127.0.0.1 even when the daemon listens on 0.0.0.0', async () => {
    const lan = lanAddress();
    const project = await newProject();
    const daemon = await start(project, ['--host', '0.0.0.0', '--inspect', '--inspect-port', '0'], {
      PULSE_TOKEN: TOKEN,
    });
    const inspectUrl = /Inspector: (http:\/\/\S+) /.exec(daemon.output())?.[1];
    expect(inspectUrl, daemon.output()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const relayPort = new URL(inspectUrl!).port;
    expect((await send(inspectUrl!)).status).toBe(200);
    if (lan === undefined) return;
    await expect(send(`http://${lan}:${relayPort}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // While the daemon itself answers there (with its token).
    expect((await send(`http://${lan}:${daemon.port}/healthz`, { headers: bearer(TOKEN) })).status).toBe(200);
  });
});
