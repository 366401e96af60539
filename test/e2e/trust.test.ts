// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in sources.json is the config's own syntax.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SystemStatus } from '../../src/system/system-status.js';
import {
  BIN,
  callTool,
  connectClient,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { save } from '../support/files.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { isRunning } from '../support/processes.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * A cloned repository's sources.json runs nothing and sends no secret until its user trusts that
 * exact content: a stdio server that would leave a marker, a URL server that would get the user's
 * token, and a model endpoint that would get the user's key, against real daemons and real servers.
 */

const started = trackStarted();
const models: ModelServer[] = [];
afterEach(async () => {
  await started.cleanUp();
  await Promise.all(models.splice(0).map((model) => model.close()));
});

const TOKEN = 'ghp-pl4nted-trust-token-7c1';
const KEY = 'sk-pl4nted-trust-key-93a';
const SECRETS = { PULSE_TRUST_TEST_TOKEN: TOKEN, PULSE_TRUST_TEST_KEY: KEY };

/** An HTTP server on loopback that records every request it gets and answers none well. */
const startRecorder = async () => {
  const requests: Array<{ url: string; authorization: string | undefined }> = [];
  const server: Server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  started.servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
};

/** A stdio server that leaves `marker` behind as it starts, then serves the fixture calendar. */
const markingServer = (marker: string, args: readonly string[]) => {
  const fixture = fixtureCommand(args);
  return { command: 'sh', args: ['-c', 'touch "$0"; exec "$@"', marker, fixture.command, ...fixture.args] };
};

/** A project as a hostile repository ships it: its sources.json written by someone else, not trusted. */
const hostileProject = async () => {
  const project = await tempProject('pulse-trust-');
  started.projects.push(project);
  const cal = await fixtureFiles(project, 'cal', { items: [{ id: 'c-1', title: 'URGENT: standup moved' }] });
  const recorder = await startRecorder();
  const model = await startModelServer();
  models.push(model);
  const marker = join(project, 'ran-marker');
  const config = JSON.stringify({
    mcpServers: {
      cal: markingServer(marker, cal.args),
      mail: { url: `${recorder.url}/mcp`, bearer_token: '${PULSE_TRUST_TEST_TOKEN}' },
    },
    sources: [
      { name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 },
      { name: 'mail', server: 'mail', tool: 'list_messages', interval_sec: 1 },
    ],
    reflection: {
      thinker: 'model',
      reflect_every_sec: 1,
      model: { base_url: model.baseUrl, model: 'm', api_key: '${PULSE_TRUST_TEST_KEY}' },
    },
  });
  await mkdir(join(project, '.pulse'), { recursive: true });
  await save(join(project, '.pulse', 'sources.json'), config);
  return { project, cal, recorder, model, marker };
};

const statusOf = async (url: string): Promise<SystemStatus> =>
  (await (await fetch(new URL('/status', url))).json()) as SystemStatus;

describe('a sources.json its user has not trusted', () => {
  it('runs nothing, connects nowhere and sends no variable, says so everywhere, and runs once trusted, without a restart', async () => {
    const { project, cal, recorder, model, marker } = await hostileProject();
    const daemon = await startDaemon(project, { env: SECRETS });
    started.daemons.push(daemon);
    expect(daemon.output()).toMatch(
      /^Sources: NOT STARTED: \.pulse\/sources\.json is not trusted \(sha256:[0-9a-f]{64}\): pulse started none of its servers \("cal" and "mail"\) and did not ask its model endpoint \(http:\/\/127\.0\.0\.1:\d+\/v1\).* To trust it: .*trust -p /m,
    );

    // The replan protocol is served meanwhile.
    const client = await connectClient(daemon.url);
    started.clients.push(client);
    expect(await callTool(client, 'pulse_should_interrupt')).toMatchObject({ needs_replan: false });

    const status = await statusOf(daemon.url);
    expect(status.sources.untrusted?.notice).toContain('is not trusted');
    expect(status.sources.untrusted?.servers).toEqual(['cal', 'mail']);
    expect(status.sources.pollers).toEqual([]);
    expect(status.sources.servers.map((server) => server.state)).toEqual(['disabled', 'disabled']);
    const health = await fetch(new URL('/healthz', daemon.url));
    expect(health.status, 'untrusted is a notice, not a fault').toBe(200);
    expect(((await health.json()) as { notices: string[] }).notices[0]).toContain('trust -p');
    const page = await (await fetch(new URL('/', daemon.url))).text();
    expect(page, "the status page's Sources card").toMatch(
      /class="error untrusted">\.pulse\/sources\.json is not trusted \(sha256:/,
    );
    const statusCli = await runCli(['status', '-p', project]);
    expect(statusCli.stdout).toMatch(/^sources: {3}NOT TRUSTED .*To trust it: .*trust -p /m);
    const doctor = await runCli(['doctor', '-p', project]);
    expect(doctor.stdout).toMatch(/^BAD sources: \.pulse\/sources\.json is not trusted/m);
    expect(doctor.stdout).toMatch(/^ {4}fix: .*trust -p /m);
    const test = await runCli(['sources', 'test', 'cal', '-p', project], { env: SECRETS });
    expect(test.code).toBe(1);
    expect(test.stderr).toContain('is not trusted, so pulse starts none of its servers, for a test neither');
    const log = await readFile(join(project, '.pulse', 'pulse.log'), 'utf8');
    expect(log).toContain('sources.json is not trusted');

    expect(existsSync(marker), 'the stdio command never ran').toBe(false);
    expect(await cal.records(), 'the fixture was never started').toEqual([]);
    expect(recorder.requests, 'no request reached the URL server').toEqual([]);
    expect(model.requests, 'no request reached the model endpoint').toEqual([]);

    const trust = await runCli(['trust', '-p', project, '--yes']);
    expect(trust.code, trust.stderr).toBe(0);
    expect(trust.stdout).toContain('Trusted sha256:');
    // The same daemon starts them now: what the user trusted does reach its servers.
    await waitUntil(() => existsSync(marker), { describe: () => 'the stdio server started' });
    await waitUntil(() => recorder.requests.some((r) => r.authorization === `Bearer ${TOKEN}`), {
      describe: () => 'the token sent to the URL server once trusted',
    });
    await model.received(1);
    expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect((await statusOf(daemon.url)).sources.untrusted).toBeNull();
  }, 60_000);

  it('stops what ran once an edit changes it, runs nothing until trusted anew, and stops again on --revoke', async () => {
    const project = await tempProject('pulse-trust-');
    started.projects.push(project);
    const cal = await fixtureFiles(project, 'cal', { items: [] });
    const config = (marker: string) =>
      JSON.stringify({
        mcpServers: { cal: markingServer(join(project, marker), cal.args) },
        sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 }],
      });
    await mkdir(join(project, '.pulse'), { recursive: true });
    await saveSources(project, config('first'));
    const daemon = await startDaemon(project);
    started.daemons.push(daemon);
    expect(daemon.output()).toMatch(/^Sources: 1 source from 1 server$/m);
    const firstPid = await waitUntil(
      async () => (await cal.records()).find((r) => r.kind === 'initialize')?.pid,
    );

    // A git pull changes the command: nothing of it runs, and what ran from the old content stops.
    await save(join(project, '.pulse', 'sources.json'), config('second'));
    await waitUntil(async () => (await statusOf(daemon.url)).sources.untrusted !== null, {
      describe: () => 'the edited file untrusted',
    });
    await waitUntil(() => !isRunning(firstPid), { describe: () => 'the server of the old content stopped' });
    expect(existsSync(join(project, 'second')), 'the changed command did not run').toBe(false);

    expect((await runCli(['trust', '-p', project, '--yes'])).code).toBe(0);
    await waitUntil(() => existsSync(join(project, 'second')), {
      describe: () => 'the new command, trusted',
    });
    const secondPid = await waitUntil(
      async () => (await cal.records()).find((r) => r.kind === 'initialize' && r.pid !== firstPid)?.pid,
    );

    const revoke = await runCli(['trust', '-p', project, '--revoke']);
    // Both contents trusted in this project go: the first and the edited one.
    expect(revoke.stdout).toMatch(/^Revoked 2 trusts of /);
    await waitUntil(async () => (await statusOf(daemon.url)).sources.untrusted !== null, {
      describe: () => 'untrusted once revoked',
    });
    await waitUntil(() => !isRunning(secondPid), { describe: () => 'its server stopped on --revoke' });
  }, 60_000);

  it('is trusted by pulse start --trust-sources or PULSE_TRUST_SOURCES naming its hash, and a wrong hash is refused', async () => {
    const { project, marker } = await hostileProject();
    const hash = (await runCli(['trust', '-p', project, '--print-hash'])).stdout.trim();
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const wrong = `sha256:${'0'.repeat(64)}`;
    await expect(startDaemon(project, { args: ['--trust-sources', wrong], env: SECRETS })).rejects.toThrow(
      `is not the file you trusted: its hash is ${hash}, not ${wrong}`,
    );
    await expect(startDaemon(project, { env: { ...SECRETS, PULSE_TRUST_SOURCES: wrong } })).rejects.toThrow(
      'is not the file you trusted',
    );
    expect(existsSync(marker)).toBe(false);

    const daemon = await startDaemon(project, { env: { ...SECRETS, PULSE_TRUST_SOURCES: hash } });
    started.daemons.push(daemon);
    expect(daemon.output()).toMatch(/^Sources: 2 sources from 2 servers$/m);
    await waitUntil(() => existsSync(marker), { describe: () => 'the stdio server started' });
  }, 60_000);

  it("runs nothing when the agent's session-start hook starts the daemon (--autostart)", async () => {
    const { project, recorder, marker } = await hostileProject();
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const hook = spawnSync(
      process.execPath,
      [
        BIN,
        'hook',
        'claude',
        '--event',
        'SessionStart',
        '--autostart',
        '-p',
        project,
        '--port',
        String(port),
      ],
      {
        input: JSON.stringify({ session_id: 'trust-1', cwd: project, hook_event_name: 'SessionStart' }),
        env: { ...process.env, ...SECRETS },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(hook.status, hook.stderr).toBe(0);
    try {
      const status = await statusOf(`http://127.0.0.1:${port}/`);
      expect(status.sources.untrusted?.servers).toEqual(['cal', 'mail']);
      expect(existsSync(marker)).toBe(false);
      expect(recorder.requests).toEqual([]);
    } finally {
      await runCli(['stop', '-p', project]);
    }
  }, 60_000);
});
