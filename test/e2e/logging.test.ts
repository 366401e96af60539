import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { readJsonLines, save } from '../support/files.js';
import { PLANTED_SECRET, plantSecretSources } from '../support/planted-secret.js';
import type { Decision } from '../support/protocol.js';
import { type Control, fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * The daemon's log, end to end: a real `pulse start` writes `.pulse/pulse.log` as JSON lines and
 * the same records as readable lines on stderr; the tests read both, as a user diagnosing would.
 */

interface LogLine {
  level: string;
  time: string;
  msg: string;
  [field: string]: unknown;
}

const started = trackStarted();

afterEach(started.cleanUp);

const newProject = async () => {
  const project = await tempProject('pulse-logging-');
  started.projects.push(project);
  await mkdir(join(project, '.pulse'), { recursive: true });
  return project;
};

const start = async (project: string, options: { args?: string[]; env?: Record<string, string> } = {}) => {
  const daemon = await startDaemon(project, options);
  started.daemons.push(daemon);
  const client = await connectClient(daemon.url);
  started.clients.push(client);
  return { daemon, client };
};

const logOf = (project: string) => readJsonLines<LogLine>(join(project, '.pulse', 'pulse.log'));

/** Waits until pulse.log has a line with `msg` (and the given fields), and returns it. */
const logged = (project: string, msg: string | RegExp, fields: Record<string, unknown> = {}) =>
  waitUntil(
    async () =>
      (await logOf(project)).find(
        (line) =>
          (typeof msg === 'string' ? line.msg === msg : msg.test(line.msg)) &&
          Object.entries(fields).every(([key, value]) => JSON.stringify(line[key]) === JSON.stringify(value)),
      ),
    { timeoutMs: 15_000, intervalMs: 50, describe: () => `"${msg}" in pulse.log` },
  );

const REPLAN_PENDING = /^replan pending/;

/** Changes guidance and lets the daemon log it; returns the pending event id. */
const changeGuidance = async (project: string, client: Client) => {
  await save(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nUse the new API.\n');
  const answer = await callTool<Decision>(client, 'pulse_should_interrupt');
  expect(answer.needs_replan).toBe(true);
  return answer.pending_replan_event_id!;
};

const sourcesFile = (project: string, config: unknown) =>
  saveSources(project, typeof config === 'string' ? config : JSON.stringify(config));

describe('the log file and --log-level', () => {
  it('writes JSON lines for a replan going pending and acknowledged, and readable lines on stderr', async () => {
    const project = await newProject();
    const { daemon, client } = await start(project);
    // Check-ins change snapshots but nothing a user reads about: no line for them.
    for (let i = 0; i < 20; i++) await callTool(client, 'pulse_should_interrupt', { agent: 'claude' });
    expect((await logOf(project)).map((line) => line.msg)).toEqual(['pulse started']);
    const pending = await changeGuidance(project, client);
    const ack = await callTool<{ accepted: boolean }>(client, 'pulse_ack_replan', { event_id: pending });
    expect(ack.accepted).toBe(true);
    expect(await daemon.stop()).toBe(0);

    const lines = await logOf(project);
    for (const line of lines) {
      expect(['info', 'warn', 'error']).toContain(line.level);
      expect(new Date(line.time).toISOString()).toBe(line.time);
      expect(typeof line.msg).toBe('string');
    }
    const msgs = lines.map((line) => line.msg);
    expect(msgs[0]).toBe('pulse started');
    expect(msgs.at(-1)).toBe('pulse stopped');
    expect(lines.find((line) => REPLAN_PENDING.test(line.msg))).toMatchObject({
      level: 'info',
      event_id: pending,
      files: ['.pulse/guidance.md'],
    });
    // The ack left plan.md as it was: the log says so in words.
    expect(lines.find((line) => line.msg === 'replan acknowledged without changing the plan')).toMatchObject({
      event_id: pending,
      plan_changed: false,
    });
    expect(msgs, 'file events are debug').not.toContain('file event logged');
    // The terminal has the same records, readable and without colour (stderr is a pipe here).
    expect(daemon.output()).toMatch(
      new RegExp(
        `\\] info: replan pending: .* \\{"event_id":"${pending}","files":\\[".pulse/guidance.md"\\]\\}`,
      ),
    );
    expect(daemon.output()).toMatch(/\] info: replan acknowledged/);
    expect(daemon.output()).not.toContain('\x1b[');
  });

  it('adds each file event at debug (PULSE_LOG_LEVEL=debug)', async () => {
    const project = await newProject();
    const { client } = await start(project, { env: { PULSE_LOG_LEVEL: 'debug' } });
    const pending = await changeGuidance(project, client);
    expect(await logged(project, 'file event logged', { event_id: pending })).toMatchObject({
      level: 'debug',
      file: '.pulse/guidance.md',
      kind: 'modified',
    });
  });

  it('leaves info out with --log-level warn, and still logs warnings', async () => {
    const project = await newProject();
    await sourcesFile(project, '{ "mcpServers": ');
    const { daemon, client } = await start(project, { args: ['--log-level', 'warn'] });
    await changeGuidance(project, client);
    expect(await daemon.stop()).toBe(0);
    const lines = await logOf(project);
    expect(lines.map((line) => line.msg)).toContain(
      'sources.json rejected: no source runs until it is fixed',
    );
    expect(lines.filter((line) => line.level !== 'warn' && line.level !== 'error')).toEqual([]);
    expect(daemon.output()).not.toMatch(/\] info: /);
  });

  it('refuses an unknown level with the levels it takes, from the flag or from PULSE_LOG_LEVEL', async () => {
    const project = await newProject();
    const flag = await runCli(['start', '--project', project, '--port', '0', '--log-level', 'loud']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain("option '--log-level <level>' argument 'loud' is invalid");
    expect(flag.stderr).toContain('trace, debug, info, warn, error, fatal, silent');
    const env = await runCli(['start', '--project', project, '--port', '0'], {
      env: { PULSE_LOG_LEVEL: 'verbose' },
    });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain("value 'verbose' from env 'PULSE_LOG_LEVEL' is invalid");
  });
});

describe('secrets and the log', () => {
  it("never writes a source's secret from the environment to pulse.log, stdout or stderr, even at trace", async () => {
    const project = await newProject();
    const { mail, env } = await plantSecretSources(project, {
      track: (child) => started.children.push(child),
    });
    const { daemon } = await start(project, {
      args: ['--log-level', 'trace'],
      env,
    });
    // The server got the secret, and its stderr line and its failure were logged, redacted.
    await waitUntil(async () => (await mail.calls()).length > 0, { describe: () => 'a call to mail' });
    expect((await mail.calls())[0]!.headers?.['x-key']).toBe(PLANTED_SECRET);
    expect(await logged(project, 'token is ***', { source_server: 'leaky' })).toMatchObject({
      level: 'info',
    });
    expect(await logged(project, 'source failing', { source: 'leaky' })).toMatchObject({ level: 'warn' });
    await waitUntil(async () => daemon.output().includes('token is ***'), {
      describe: () => 'the stderr line',
    });
    expect(await daemon.stop()).toBe(0);

    const file = await readFile(join(project, '.pulse', 'pulse.log'), 'utf8');
    expect(file).toContain('token is ***');
    expect(file).not.toContain(PLANTED_SECRET);
    expect(daemon.output()).not.toContain(PLANTED_SECRET);
  });
});

describe('the activity log', () => {
  const items = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ id: `cal-${i + 1}`, title: `cal item ${i + 1}` }));

  it('logs a delivery going out, acknowledged, put back and dead-lettered', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items(2) });
    await sourcesFile(project, {
      mcpServers: { cal: fixtureCommand(cal.args) },
      sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 300 }],
      reflection: { max_attempts: 2 },
    });
    const { client } = await start(project);
    const check = () =>
      waitUntil(
        async () => {
          const answer = await callTool<{
            delivery_id: string | null;
            external_events: Array<{ id: string }>;
          }>(client, 'pulse_should_interrupt', { agent: 'claude' });
          return answer.delivery_id !== null && answer;
        },
        { timeoutMs: 15_000, intervalMs: 100, describe: () => 'a delivery' },
      );
    const ackAs = (deliveryId: string, outcomes: Record<string, string>) =>
      callTool(client, 'pulse_ack_events', { delivery_id: deliveryId, outcomes });

    const first = await check();
    const [told, later] = first.external_events.map((event) => event.id) as [string, string];
    expect(
      await logged(project, 'delivery out to an agent', { delivery_id: first.delivery_id }),
    ).toMatchObject({
      // Known by its session (a name counts only without one).
      agent: expect.stringMatching(/^an MCP client \(session [0-9a-f]{8}…\)$/),
      events: [
        { id: told, source: 'cal', title: 'cal item 1' },
        { id: later, source: 'cal', title: 'cal item 2' },
      ],
    });
    await ackAs(first.delivery_id!, { [told]: 'told', [later]: 'later' });
    expect(await logged(project, 'delivery acknowledged', { delivery_id: first.delivery_id })).toMatchObject({
      consumed: [told],
      put_back: [later],
      dead_lettered: [],
    });

    const second = await check();
    await ackAs(second.delivery_id!, { [later]: 'later' });
    expect(await logged(project, 'delivery acknowledged', { delivery_id: second.delivery_id })).toMatchObject(
      {
        dead_lettered: [later],
      },
    );
    expect(await logged(project, 'external event dead-lettered', { id: later })).toMatchObject({
      level: 'warn',
      reason: 'max_attempts',
      title: 'cal item 2',
    });
    expect(JSON.stringify(await logOf(project)), 'no item detail').not.toContain('"detail"');
  });

  it('logs a source failing once and recovering once, sources.json reloaded or rejected, and focus on and off', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items(1), mode: 'isError' } satisfies Control);
    const calSource = { name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 1 };
    const servers = { cal: fixtureCommand(cal.args) };
    await sourcesFile(project, { mcpServers: servers, sources: [calSource] });
    const { daemon } = await start(project);

    await logged(project, 'source failing', { source: 'cal' });
    // Let it fail a few more polls: still one line.
    await waitUntil(async () => (await cal.calls()).length >= 3, {
      timeoutMs: 15_000,
      describe: () => 'three failed polls',
    });
    await cal.setControl({ items: items(1) });
    const recovered = await logged(project, 'source recovered', { source: 'cal' });
    expect(recovered.failed_polls).toBeGreaterThanOrEqual(3);
    const lines = await logOf(project);
    expect(lines.filter((line) => line.msg === 'source failing')).toHaveLength(1);
    expect(lines.filter((line) => line.msg === 'source recovered')).toHaveLength(1);

    await sourcesFile(project, '{ "mcpServers": ');
    expect((await logged(project, /^sources\.json rejected/)).error).toContain('sources.json');
    await sourcesFile(project, {
      mcpServers: servers,
      sources: [calSource, { ...calSource, name: 'cal-2', tool: 'list_items' }],
    });
    await logged(project, 'sources.json loaded', { sources: 2, servers: 1 });

    const on = await runCli(['focus', '45m', '--project', project]);
    expect(on.code, on.stderr).toBe(0);
    expect((await logged(project, /^focus on/)).until).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await runCli(['focus', 'off', '--project', project])).code).toBe(0);
    await logged(project, /^focus off/);
    expect(daemon.output()).toMatch(/\] warning: source failing \{"source":"cal"/);
  });
});
