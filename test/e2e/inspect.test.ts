// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in sources.json is the config's own syntax.
import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { createWebSocketReceiver, type StatelyInspectionEvent } from '@statelyai/inspect';
import { afterEach, describe, expect, it } from 'vitest';
import { pulseRunning } from '../support/cli-running.js';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { recordedDaemon } from '../support/daemon-record.js';
import { save } from '../support/files.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * `pulse start --inspect`, end to end: a real daemon with a real source streams its actor system
 * to its relay; a receiver (as the Stately page or `pulse inspect` is) sees every actor and the
 * events of a replan and of a delivery, and nothing of the planted guidance, secret or item detail.
 */

const SECRET = 'planted-s3cret-7f1c';
const GUIDANCE = 'PLANTED-GUIDANCE-stop-using-the-old-api';
const DETAIL = 'PLANTED-DETAIL-salary-review-notes';
const ACTORS = ['pulse', 'watcher', 'log', 'replan', 'inbox', 'gate', 'focus', 'sources', 'poller:cal'];

const started = trackStarted();

afterEach(started.cleanUp);

const newProject = async () => {
  const project = await tempProject('pulse-inspect-');
  started.projects.push(project);
  await mkdir(join(project, '.pulse'), { recursive: true });
  return project;
};

/**
 * A project with one source, `cal`, a stdio fixture given the planted secret through `${VAR}`;
 * its one item's title carries the secret too (so only redaction keeps it out) and its raw
 * detail the planted detail. The daemon runs with `--inspect --inspect-port 0`.
 */
const startInspected = async () => {
  const project = await newProject();
  const cal = await fixtureFiles(project, 'cal', {
    items: [{ id: 'cal-1', title: `Review with ${SECRET}`, notes: DETAIL }],
  });
  const config = {
    mcpServers: { cal: { ...fixtureCommand(cal.args), env: { FIXTURE_ECHO_ENV: '${PLANTED_SECRET}' } } },
    sources: [{ name: 'cal', server: 'cal', tool: 'list_events', args: {}, interval_sec: 300 }],
  };
  await saveSources(project, JSON.stringify(config));
  const daemon = await startDaemon(project, {
    args: ['--inspect', '--inspect-port', '0'],
    env: { PLANTED_SECRET: SECRET },
  });
  started.daemons.push(daemon);
  const inspectUrl = /Inspector: (http:\/\/127\.0\.0\.1:\d+) \(the page embeds stately\.ai\/inspect/.exec(
    daemon.output(),
  )?.[1];
  expect(inspectUrl, daemon.output()).toBeDefined();
  const client = await connectClient(daemon.url);
  started.clients.push(client);
  return { project, daemon, client, cal, inspectUrl: inspectUrl! };
};

/** The events a receiver attached to the relay got, raw (as JSON) and parsed. */
const receive = (inspectUrl: string) => {
  const events: StatelyInspectionEvent[] = [];
  createWebSocketReceiver({ server: inspectUrl.replace('http', 'ws') }).subscribe((event) => {
    events.push(event);
  });
  const names = () =>
    new Set(events.flatMap((e) => (e.type === '@xstate.actor' ? [e.name] : [])) as string[]);
  const sessionOf = (name: string) =>
    events.find((e) => e.type === '@xstate.actor' && e.name === name)?.sessionId;
  const eventsTo = (name: string) =>
    events.flatMap((e) =>
      e.type === '@xstate.event' && e.sessionId === sessionOf(name) ? [e.event.type as string] : [],
    );
  const statesOf = (name: string) =>
    events.flatMap((e) =>
      e.type === '@xstate.snapshot' && e.sessionId === sessionOf(name)
        ? [(e.snapshot as { value?: unknown }).value]
        : [],
    );
  return { events, names, eventsTo, statesOf };
};

interface Answer {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
  needs_attention: boolean;
  delivery_id: string | null;
}

/** A replan (guidance edited, check-in sees it pending, ack) and a delivery (check-in gets it, ack). */
const runBothFlows = async (project: string, client: Client) => {
  await save(join(project, '.pulse', 'guidance.md'), `# Guidance\n\n${GUIDANCE}\n`);
  const pending = await callTool<Answer>(client, 'pulse_should_interrupt', {});
  expect(pending.needs_replan).toBe(true);
  const acked = await callTool<{ accepted: boolean; reason: string }>(client, 'pulse_ack_replan', {
    event_id: pending.pending_replan_event_id,
  });
  expect(acked.accepted, acked.reason).toBe(true);

  const delivery = await waitUntil(
    async () => {
      const answer = await callTool<Answer>(client, 'pulse_should_interrupt', {});
      return answer.needs_attention && answer;
    },
    { timeoutMs: 15_000, intervalMs: 100, describe: () => 'a delivery' },
  );
  const settled = await callTool<{ accepted: boolean; reason: string }>(client, 'pulse_ack_events', {
    delivery_id: delivery.delivery_id,
  });
  expect(settled.accepted, settled.reason).toBe(true);
};

/** GET `path` of the relay with exactly these headers (fetch would not let a test set Host). */
const get = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });

describe('pulse start --inspect', () => {
  it('streams every actor and both flows to a receiver, without file contents, secrets or item detail', async () => {
    const { project, client, cal, inspectUrl } = await startInspected();
    const discovery = recordedDaemon(project);
    expect(discovery.inspect_url).toBe(inspectUrl);
    const seen = receive(inspectUrl);
    // The poller has polled: the secret was live in the daemon (the server got it) and the item is in.
    await waitUntil(async () => (await cal.calls()).length > 0, { describe: () => 'a poll' });
    expect((await cal.records())[0]!.env).toBe(SECRET);
    await waitUntil(() => ACTORS.every((name) => seen.names().has(name)), {
      describe: () => `registrations of ${ACTORS.join(', ')} (got ${[...seen.names()].join(', ')})`,
    });

    await runBothFlows(project, client);

    const expected: Record<string, string[]> = {
      log: ['log.reconcile', 'file.changed'],
      replan: ['log.appended', 'replan.ack'],
      gate: ['gate.reflect', 'gate.claim', 'gate.ack'],
      inbox: ['inbox.drain', 'inbox.settle'],
    };
    await waitUntil(
      () =>
        Object.entries(expected).every(([actor, types]) =>
          types.every((t) => seen.eventsTo(actor).includes(t)),
        ),
      {
        describe: () =>
          `the flows' events (got ${JSON.stringify(Object.fromEntries(Object.keys(expected).map((a) => [a, [...new Set(seen.eventsTo(a))]])))})`,
      },
    );
    await waitUntil(() => seen.statesOf('replan').includes('acknowledged'), {
      describe: () => 'acknowledged',
    });
    expect(seen.statesOf('replan')).toContain('pending');
    expect(seen.statesOf('gate')).toContain('awaiting');

    const all = seen.events.map((event) => JSON.stringify(event));
    for (const planted of [GUIDANCE, SECRET, DETAIL]) {
      expect(all.filter((message) => message.includes(planted))).toEqual([]);
    }
    // The title came through, with the secret redacted; the log's index as a summary only.
    expect(all.some((message) => message.includes('Review with ***'))).toBe(true);
    const logSnapshots = seen.events.filter(
      (e) => e.type === '@xstate.snapshot' && JSON.stringify(e).includes('"index":{"latestId"'),
    );
    expect(logSnapshots.length).toBeGreaterThan(0);
  }, 60_000);

  it('`pulse inspect` prints a line per actor, event and state change, and exits cleanly on Ctrl-C', async () => {
    const { project, client } = await startInspected();
    const inspect = pulseRunning(started, ['inspect', '-p', project]);
    await waitUntil(() => /Inspecting http:\/\/127\.0\.0\.1:\d+/.test(inspect.errors()), {
      describe: inspect.errors,
    });
    await inspect.printed(/poller:cal {2}started/);

    await runBothFlows(project, client);

    const line = (actor: string, what: string) =>
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3}  ${actor}  ${what}`, 'm');
    const wanted = [
      line('pulse', 'started'),
      line('replan', 'started \\(child of pulse\\)'),
      line('log', 'event log\\.reconcile  from outside'),
      line('replan', 'state pending'),
      line('replan', 'event replan\\.ack'),
      line('replan', 'state acknowledged'),
      line('gate', 'event gate\\.claim'),
      line('gate', 'state awaiting'),
      line('gate', 'event gate\\.ack'),
      line('inbox', 'event inbox\\.settle  from gate'),
    ];
    await waitUntil(() => wanted.every((pattern) => pattern.test(inspect.output())), {
      describe: () =>
        `lines ${wanted.filter((p) => !p.test(inspect.output())).join(', ')} in:\n${inspect.output().slice(-3000)}`,
    });
    expect(inspect.output()).not.toContain(GUIDANCE);
    expect(inspect.output()).not.toContain(SECRET);

    inspect.child.kill('SIGINT');
    expect(await inspect.exited).toBe(0);
  }, 60_000);

  it('`pulse inspect --json` prints the raw events, one JSON object a line', async () => {
    const { project } = await startInspected();
    const inspect = pulseRunning(started, ['inspect', '-p', project, '--json']);
    await inspect.printed(/"name":"poller:cal"/);
    inspect.child.kill('SIGTERM');
    expect(await inspect.exited).toBe(0);
    const events = inspect
      .output()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as StatelyInspectionEvent);
    expect(events.some((e) => e.type === '@xstate.actor' && e.name === 'gate')).toBe(true);
    expect(events.every((e) => typeof e.sessionId === 'string')).toBe(true);
  }, 30_000);

  it('serves the relay page only to loopback Host and Origin headers', async () => {
    const { inspectUrl } = await startInspected();
    const port = new URL(inspectUrl).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const page = await get(inspectUrl, { host });
      expect(page.status, host).toBe(200);
      expect(page.body).toContain('https://stately.ai/inspect');
    }
    expect((await get(inspectUrl, { host: `evil.example:${port}` })).status).toBe(403);
    expect((await get(inspectUrl, { host: `127.0.0.1.evil.example:${port}` })).status).toBe(403);
    expect((await get(inspectUrl, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' })).status).toBe(
      403,
    );
  }, 30_000);

  it('tells how to start one when no inspector runs, and names a taken --inspect-port', async () => {
    const project = await newProject();
    const none = await runCli(['inspect', '-p', project]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/pulse start --inspect/);

    const taken = createServer();
    started.servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const busy = await runCli(['start', '-p', project, '--port', '0', '--inspect-port', String(port)]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`--inspect-port ${port} is in use; pick another or 0`);

    const withoutInspector = await startDaemon(project);
    started.daemons.push(withoutInspector);
    expect(withoutInspector.output()).not.toContain('Inspector:');
    const plain = await runCli(['inspect', '-p', project]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/runs without an inspector.*pulse start --inspect/);
  }, 30_000);
});
