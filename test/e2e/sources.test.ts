// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in sources.json is the config's own syntax.
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SystemStatus } from '../../src/system/system-status.js';
import {
  CLI,
  callTool,
  connectClient,
  type RunningDaemon,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { readJsonLines } from '../support/files.js';
import { groupMembers, groupOf, isAlive } from '../support/processes.js';
import {
  type FixtureFiles,
  fixtureBehindShell,
  fixtureCommand,
  fixtureFamily,
  fixtureFiles,
  type RecordLine,
  startHttpFixture,
} from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { controlsIn, HOSTILE_TITLE, HOSTILE_TITLE_SHOWN } from '../support/terminal.js';
import { saveSources } from '../support/trust.js';

/*
 * The external sources, end to end: a real `pulse start` polls real MCP servers (the fixture,
 * one over stdio acting as a calendar, one over HTTP acting as a mail box), and the test reads
 * what the daemon wrote (.pulse/inbox.jsonl, external_seen.jsonl), what it reports (/status,
 * `pulse status`, `pulse sources list`), and what the servers recorded of each call.
 */

const SECRET = 's3cret';
const OTHER_SECRET = 'other-0f-a-kind';
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

interface InboxRow {
  op: 'insert' | 'remove';
  event?: { id: string; source: string; item_id: string; title: string; received_at: string };
  ids?: string[];
}

type Poller = SystemStatus['sources']['pollers'][number];

// ---------------------------------------------------------------------------------------------
// Fixtures, files and the daemon's reports.
// ---------------------------------------------------------------------------------------------

const started = trackStarted();

afterEach(started.cleanUp);

const newProject = async () => {
  const project = await tempProject('pulse-sources-');
  started.projects.push(project);
  return project;
};

const start = async (project: string) => {
  const daemon = await startDaemon(project, { env: { MAIL_TOKEN: SECRET, OTHER_TOKEN: OTHER_SECRET } });
  started.daemons.push(daemon);
  return daemon;
};

/** Starts the fixture over streamable HTTP and resolves with its URL. */
const httpFixture = (files: FixtureFiles) =>
  startHttpFixture(files.args, (child) => started.children.push(child));

const stdioServer = (files: FixtureFiles, extra: Record<string, unknown> = {}) => ({
  ...fixtureCommand(files.args),
  ...extra,
});

const source = (name: string, server: string, extra: Record<string, unknown> = {}) => ({
  name,
  server,
  tool: 'list_events',
  args: { source: name },
  interval_sec: 1,
  ...extra,
});

const items = (prefix: string, count: number, from = 1) =>
  Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${from + i}`,
    title: `${prefix} item ${from + i}`,
  }));

/** Writes sources.json as editors do (temp file, then rename), so the watcher never reads half a file. */
const writeSources = async (project: string, config: unknown) => {
  await mkdir(join(project, '.pulse'), { recursive: true });
  await saveSources(project, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
};

/** The journal's rows, and the live events they leave (inserts minus removes). */
const readInbox = async (project: string) => {
  const rows = await readJsonLines<InboxRow>(join(project, '.pulse', 'inbox.jsonl'));
  const live = new Map<string, NonNullable<InboxRow['event']>>();
  for (const row of rows) {
    if (row.op === 'insert') live.set(row.event!.id, row.event!);
    else for (const id of row.ids ?? []) live.delete(id);
  }
  const inserts = rows.filter((row) => row.op === 'insert').map((row) => row.event!);
  return { rows, inserts, live: [...live.values()] };
};

const itemIds = (events: ReadonlyArray<{ item_id: string }>) => events.map((e) => e.item_id).sort();

const getStatus = async (daemon: RunningDaemon): Promise<SystemStatus> => {
  const response = await fetch(new URL('/status', daemon.url));
  expect(response.status).toBe(200);
  return (await response.json()) as SystemStatus;
};

const pollerOf = (status: SystemStatus, name: string): Poller | undefined =>
  status.sources.pollers.find((p) => p.source === name);

const sourcesList = async (project: string) => {
  const { code, stdout, stderr } = await runCli(['sources', 'list', '--project', project, '--json'], {
    env: { MAIL_TOKEN: SECRET, OTHER_TOKEN: OTHER_SECRET },
  });
  expect(code, stderr).toBe(0);
  return {
    stdout,
    stderr,
    list: JSON.parse(stdout) as { running: boolean; pollers: Poller[]; error: string | null },
  };
};

/**
 * Waits up to `timeoutMs` for `check`, checking every 50 ms. A check that throws counts as not
 * yet (a file read in the middle of an append), and its error is named if time runs out.
 */
const eventually = <T>(describe: string, check: () => Promise<T | undefined | false>, timeoutMs = 10_000) => {
  let lastError = '';
  const tolerant = async () => {
    try {
      return await check();
    } catch (error) {
      lastError = ` (last check failed: ${error instanceof Error ? error.message : String(error)})`;
      return undefined;
    }
  };
  return waitUntil(tolerant, { timeoutMs, intervalMs: 50, describe: () => `${describe}${lastError}` });
};

/** Gaps between successive calls, in ms. */
const gaps = (calls: RecordLine[]) => calls.slice(1).map((call, i) => call.at - calls[i]!.at);

// ---------------------------------------------------------------------------------------------

describe('external sources, against real MCP servers', () => {
  it('polls every source once at start, then each on its own interval', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 2) });
    const mail = await fixtureFiles(project, 'mail', {
      items: [
        { messageId: 'm-1', subject: 'Lunch?' },
        { messageId: 'm-2', subject: 'Invoice' },
      ],
    });
    await writeSources(project, {
      mcpServers: { cal: stdioServer(cal), mail: { url: await httpFixture(mail) } },
      sources: [source('cal', 'cal'), source('mail', 'mail', { tool: 'list_messages', interval_sec: 300 })],
    });
    const daemon = await start(project);

    // The first tick: both sources, though mail's interval is five minutes.
    await eventually(
      'a first call to each source',
      async () => (await mail.calls()).length === 1 && (await cal.calls()).length >= 1,
    );
    await eventually('both sources in the inbox', async () => (await readInbox(project)).live.length === 4);
    const { live } = await readInbox(project);
    expect(itemIds(live)).toEqual(['cal-1', 'cal-2', 'm-1', 'm-2']);
    expect(live.find((e) => e.item_id === 'm-2')?.title).toBe('Invoice');
    expect(new Set(live.map((e) => e.source))).toEqual(new Set(['cal', 'mail']));

    // cal keeps coming, never sooner than its interval; mail waits for its own.
    const calCalls = await eventually('five calls to cal', async () => {
      const calls = await cal.calls();
      return calls.length >= 5 && calls;
    });
    for (const gap of gaps(calCalls)) expect(gap).toBeGreaterThanOrEqual(900);
    expect(calCalls.every((call) => call.tool === 'list_events' && call.args?.source === 'cal')).toBe(true);
    expect(await mail.calls(), 'mail is not polled again within its 300 s interval').toHaveLength(1);
    expect((await mail.calls())[0]!.tool).toBe('list_messages');

    const status = await getStatus(daemon);
    expect(pollerOf(status, 'cal')).toMatchObject({ interval_sec: 1, last_error: null, items_seen: 2 });
    expect(pollerOf(status, 'cal')!.polls).toBeGreaterThanOrEqual(5);
    expect(pollerOf(status, 'mail')).toMatchObject({
      state: 'waiting',
      polls: 1,
      items_seen: 2,
      interval_sec: 300,
    });
    expect((await readInbox(project)).inserts, 'nothing is inserted twice').toHaveLength(4);
  });

  it('lets 20 of 25 listed items in on the first poll and the other 5 on a catch-up poll, none twice', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 25) });
    await writeSources(project, {
      mcpServers: { cal: stdioServer(cal) },
      sources: [source('cal', 'cal', { interval_sec: 300 })],
    });
    const daemon = await start(project);

    const all = await eventually('all 25 in the journal', async () => {
      const { inserts } = await readInbox(project);
      return inserts.length >= 25 && inserts;
    });
    expect(all).toHaveLength(25);
    expect(new Set(all.map((e) => e.id)).size, 'no duplicate').toBe(25);
    // One poll's inserts share their received_at: the first poll let in the first 20 listed, the next the rest.
    const [first, rest] = [all.slice(0, 20), all.slice(20)];
    expect(new Set(first.map((e) => e.received_at)).size).toBe(1);
    expect(new Set(rest.map((e) => e.received_at)).size).toBe(1);
    expect(rest[0]!.received_at > first[0]!.received_at, 'the rest came with a later poll').toBe(true);
    expect(
      first.map((e) => e.item_id),
      'the cap: the first 20 listed',
    ).toEqual(items('cal', 20).map((i) => i.id));
    expect(rest.map((e) => e.item_id)).toEqual(items('cal', 5, 21).map((i) => i.id));

    // With a five-minute interval, the second call can only be the catch-up.
    const calls = await cal.calls();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1_900);
    const poller = await eventually('the poller back to waiting', async () => {
      const current = pollerOf(await getStatus(daemon), 'cal');
      return current?.state === 'waiting' && current;
    });
    expect(poller).toMatchObject({ catch_ups: 1, items_seen: 25, polls: 2 });
    const seen = await readJsonLines<{ k: string; s?: string }>(
      join(project, '.pulse', 'external_seen.jsonl'),
    );
    expect(
      seen.filter((row) => row.s === undefined),
      "the source's marks",
    ).toHaveLength(25);
    expect(
      seen.filter((row) => row.s === 'cal'),
      "its server's, each first listed by it",
    ).toHaveLength(25);
  });

  it('inserts nothing again after a restart: what was seen stays seen', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 3) });
    const mail = await fixtureFiles(project, 'mail', { items: items('mail', 2) });
    await writeSources(project, {
      mcpServers: { cal: stdioServer(cal), mail: { url: await httpFixture(mail) } },
      sources: [source('cal', 'cal'), source('mail', 'mail')],
    });
    let daemon = await start(project);
    await eventually('5 items in the inbox', async () => (await readInbox(project)).live.length === 5);
    const before = itemIds((await readInbox(project)).live);
    expect(await daemon.stop()).toBe(0);

    daemon = await start(project);
    const restartedAt = Date.now();
    await eventually('three polls of each source after the restart', async () => {
      const late = (calls: RecordLine[]) => calls.filter((call) => call.at > restartedAt).length >= 3;
      return late(await cal.calls()) && late(await mail.calls());
    });
    const after = await readInbox(project);
    expect(itemIds(after.live)).toEqual(before);
    expect(after.inserts, 'the journal holds each item once').toHaveLength(5);
    const status = await getStatus(daemon);
    expect(status.inbox).toMatchObject({ size: 5, inserted: 0 });

    // Still polling for real: a new item gets in.
    await cal.setControl({ items: items('cal', 4) });
    await eventually('the new item', async () =>
      (await readInbox(project)).live.some((e) => e.item_id === 'cal-4'),
    );
    expect((await readInbox(project)).inserts).toHaveLength(6);
  });

  it('lets an item in again once its seen entry is older than the 7-day TTL, and not before', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', {
      items: [
        { id: 'expired', title: 'Last listed 8 days ago' },
        { id: 'stale', title: 'Last listed 2 days ago' },
        { id: 'recent', title: 'Last listed 2 hours ago' },
        { id: 'new', title: 'Never seen' },
      ],
    });
    await writeSources(project, { mcpServers: { cal: stdioServer(cal) }, sources: [source('cal', 'cal')] });
    const now = Date.now();
    const mark = (id: string, t: number) => `${JSON.stringify({ k: `cal\u0000${id}`, t })}\n`;
    await writeFile(
      join(project, '.pulse', 'external_seen.jsonl'),
      mark('expired', now - 8 * DAY_MS) + mark('stale', now - 2 * DAY_MS) + mark('recent', now - 2 * HOUR_MS),
    );
    await start(project);

    await eventually('the expired and the new item', async () => (await readInbox(project)).live.length >= 2);
    await eventually('two more polls', async () => (await cal.calls()).length >= 3);
    expect(itemIds((await readInbox(project)).live)).toEqual(['expired', 'new']);
    const seen = await readJsonLines<{ k: string; t: number }>(
      join(project, '.pulse', 'external_seen.jsonl'),
    );
    const timesOf = (id: string) => seen.filter((row) => row.k === `cal\u0000${id}`).map((row) => row.t);
    expect(timesOf('expired').length).toBeGreaterThan(0);
    expect(
      timesOf('expired').every((t) => t >= now),
      'the expired entry is replaced, not kept',
    ).toBe(true);
    expect(timesOf('stale'), 'listed again, a mark older than a day is written again').toEqual([
      now - 2 * DAY_MS,
      expect.any(Number),
    ]);
    expect(timesOf('stale')[1]).toBeGreaterThanOrEqual(now);
    expect(timesOf('recent'), 'a mark younger than a day is left as it is').toEqual([now - 2 * HOUR_MS]);
  });

  it('never lets in again an item its source keeps listing, across restarts: the 7 days count from the last listing', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', {
      items: [
        { id: 'open-task', title: 'Delivered and consumed a week ago, still open' },
        { id: 'new', title: 'Never seen' },
      ],
    });
    await writeSources(project, { mcpServers: { cal: stdioServer(cal) }, sources: [source('cal', 'cal')] });
    const seenPath = join(project, '.pulse', 'external_seen.jsonl');
    const marksOf = async (id: string) =>
      (await readJsonLines<{ k: string; t: number }>(seenPath))
        .filter((row) => row.k === `cal\u0000${id}`)
        .map((row) => row.t);
    /** Time passing while the daemon is stopped: every mark moves `ms` into the past. */
    const age = async (ms: number) => {
      const rows = await readJsonLines<{ k: string; t: number }>(seenPath);
      await writeFile(seenPath, rows.map((row) => `${JSON.stringify({ ...row, t: row.t - ms })}\n`).join(''));
    };
    await writeFile(
      seenPath,
      `${JSON.stringify({ k: 'cal\u0000open-task', t: Date.now() - 6.5 * DAY_MS })}\n`,
    );

    const markedAgain: boolean[] = [];
    for (const run of [1, 2, 3]) {
      const startedAt = Date.now();
      const daemon = await start(project);
      await eventually(`three polls in run ${run}`, async () => {
        const calls = await cal.calls();
        return calls.filter((call) => call.at >= startedAt).length >= 3;
      });
      const inbox = await readInbox(project);
      expect(itemIds(inbox.inserts), `run ${run}: the open task is not let in again`).toEqual(['new']);
      markedAgain.push((await marksOf('open-task')).some((t) => t >= startedAt));
      expect(await daemon.stop()).toBe(0);
      // Six and a half days pass before the next start: 13 days since the first mark after two runs.
      await age(6.5 * DAY_MS);
    }
    expect(
      markedAgain,
      'listed with a mark 6.5 days old, the open task was marked again in each run',
    ).toEqual([true, true, true]);
  }, 60_000);

  it('times out a server that never answers, reports it, and keeps polling the other source on schedule', async () => {
    const project = await newProject();
    const mail = await fixtureFiles(project, 'mail', { mode: 'hang' });
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 2) });
    await writeSources(project, {
      mcpServers: { mail: { url: await httpFixture(mail), timeout_sec: 1 }, cal: stdioServer(cal) },
      sources: [source('mail', 'mail'), source('cal', 'cal')],
    });
    await start(project);

    const failed = await eventually('the timeout in pulse sources list', async () => {
      const { list } = await sourcesList(project);
      const poller = list.pollers.find((p) => p.source === 'mail');
      return poller?.last_error ? poller : undefined;
    });
    expect(failed.last_error).toMatch(
      /server "mail" did not answer "list_events" within 1 s \(timeout_sec\)/,
    );
    expect(failed.failures).toBeGreaterThanOrEqual(1);
    const failedAt = Date.now();

    const calCalls = await eventually(
      'cal polled three more times',
      async () => {
        const calls = (await cal.calls()).filter((call) => call.at > failedAt);
        return calls.length >= 3 && calls;
      },
      15_000,
    );
    for (const gap of gaps(calCalls)) expect(gap).toBeGreaterThanOrEqual(900);
    const { list } = await sourcesList(project);
    expect(list.running).toBe(true);
    expect(list.pollers.find((p) => p.source === 'cal')).toMatchObject({
      last_error: null,
      failures: 0,
      items_seen: 2,
    });
    expect(list.pollers.find((p) => p.source === 'mail')!.items_seen).toBe(0);
    expect(itemIds((await readInbox(project)).live)).toEqual(['cal-1', 'cal-2']);
  });

  it('backs off from a server that crashes, counting failures, and recovers once it answers again', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { mode: 'crash' });
    await writeSources(project, { mcpServers: { cal: stdioServer(cal) }, sources: [source('cal', 'cal')] });
    const daemon = await start(project);

    const backingOff = await eventually('the poller backing off', async () => {
      const poller = pollerOf(await getStatus(daemon), 'cal');
      return poller?.state === 'backingOff' && poller;
    });
    expect(backingOff.failures).toBeGreaterThanOrEqual(1);
    expect(backingOff.next_poll_at).not.toBeNull();
    // Three failures counted before the server is mended, so the first three calls all crashed.
    const failing = await eventually('three failures counted', async () => {
      const poller = pollerOf(await getStatus(daemon), 'cal');
      return poller !== undefined && poller.failures >= 3 && poller;
    });
    await cal.setControl({ items: items('cal', 2) });
    expect(failing.last_error).toMatch(/server "cal"/);
    const crashes = (await cal.calls()).slice(0, 3);
    expect(new Set(crashes.map((call) => call.pid)).size, 'a crashed server is spawned afresh').toBe(3);
    // Lower bounds of the jittered backoff: at least 0.5 s after the first failure, 1 s after the second.
    const [first, second] = gaps(crashes);
    expect(first).toBeGreaterThanOrEqual(500);
    expect(second).toBeGreaterThanOrEqual(1_000);

    await eventually(
      'the items after recovery',
      async () => (await readInbox(project)).live.length === 2,
      15_000,
    );
    // The journal is written before the poller hears back: wait for its count, then check the reset.
    const recovered = await eventually('a poller that recovered', async () => {
      const poller = pollerOf(await getStatus(daemon), 'cal')!;
      return poller.items_seen === 2 && poller;
    });
    expect(recovered).toMatchObject({ last_error: null, failures: 0 });
  });

  it('records garbage and isError answers as failed polls, keeps running and answering MCP', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { mode: 'garbage' });
    const mail = await fixtureFiles(project, 'mail', { mode: 'isError' });
    await writeSources(project, {
      mcpServers: { cal: stdioServer(cal), mail: { url: await httpFixture(mail) } },
      sources: [source('cal', 'cal'), source('mail', 'mail')],
    });
    const daemon = await start(project);

    const status = await eventually('both errors', async () => {
      const current = await getStatus(daemon);
      return pollerOf(current, 'cal')?.last_error && pollerOf(current, 'mail')?.last_error
        ? current
        : undefined;
    });
    expect(pollerOf(status, 'cal')!.last_error).toMatch(/no list found/);
    expect(pollerOf(status, 'mail')!.last_error).toMatch(
      /isError: fixture failure: the control file asked for an error/,
    );
    expect(pollerOf(status, 'cal')!.failures).toBeGreaterThanOrEqual(1);
    expect(pollerOf(status, 'mail')!.failures).toBeGreaterThanOrEqual(1);
    expect((await readInbox(project)).rows).toEqual([]);

    expect(daemon.process.exitCode).toBeNull();
    const client = await connectClient(daemon.url);
    try {
      const answer = await callTool<{ needs_replan: boolean }>(client, 'pulse_should_interrupt', {});
      expect(answer.needs_replan).toBe(false);
    } finally {
      await client.close();
    }

    await cal.setControl({ items: items('cal', 1) });
    await mail.setControl({ items: items('mail', 1) });
    await eventually(
      'both sources recovered',
      async () => (await readInbox(project)).live.length === 2,
      15_000,
    );
  });

  it('sends the bearer token from the environment, lets an explicit Authorization header win, and never shows a secret', async () => {
    const project = await newProject();
    const mail = await fixtureFiles(project, 'mail', { items: items('mail', 1) });
    const explicit = await fixtureFiles(project, 'explicit', { items: items('explicit', 1) });
    await writeSources(project, {
      mcpServers: {
        mail: { url: await httpFixture(mail), bearer_token: '${MAIL_TOKEN}' },
        explicit: {
          url: await httpFixture(explicit),
          bearer_token: '${MAIL_TOKEN}',
          headers: { Authorization: 'Token ${OTHER_TOKEN}' },
        },
        // A server that prints its secret to stderr and exits: the line and the error reach the daemon.
        leaky: {
          command: process.execPath,
          args: ['-e', "console.error('token is ' + process.env.LEAK); process.exit(2)"],
          env: { LEAK: '${MAIL_TOKEN}' },
        },
      },
      sources: [source('mail', 'mail'), source('explicit', 'explicit'), source('leaky', 'leaky')],
    });
    const daemon = await start(project);

    await eventually(
      'a call to each HTTP server',
      async () => (await mail.calls()).length > 0 && (await explicit.calls()).length > 0,
    );
    expect((await mail.calls())[0]!.headers?.authorization).toBe(`Bearer ${SECRET}`);
    expect((await explicit.calls())[0]!.headers?.authorization).toBe(`Token ${OTHER_SECRET}`);
    expect(
      (await explicit.records()).every((line) => line.headers?.authorization === `Token ${OTHER_SECRET}`),
    ).toBe(true);

    const status = await eventually('the leaky server failing', async () => {
      const current = await getStatus(daemon);
      return pollerOf(current, 'leaky')?.last_error ? current : undefined;
    });
    expect(pollerOf(status, 'leaky')!.last_error).toContain('token is ***');
    expect(status.sources.warnings.join('\n')).toMatch(
      /both an Authorization header and bearer_token; the header is used/,
    );
    await eventually('the stderr line in the daemon output', async () =>
      daemon.output().includes('token is ***'),
    );
    await eventually(
      'both HTTP sources in the inbox',
      async () => (await readInbox(project)).live.length === 2,
    );

    const statusText = JSON.stringify(await getStatus(daemon));
    const { stdout: listed, stderr: listErrors } = await sourcesList(project);
    const pulseStatus = await runCli(['status', '--project', project]);
    const pulseStatusJson = await runCli(['status', '--project', project, '--json']);
    expect(pulseStatus.stdout).toContain('leaky');
    for (const [where, text] of Object.entries({
      'daemon output': daemon.output(),
      '/status': statusText,
      'pulse sources list --json': listed + listErrors,
      'pulse status': pulseStatus.stdout + pulseStatus.stderr,
      'pulse status --json': pulseStatusJson.stdout + pulseStatusJson.stderr,
    })) {
      expect(text, `${where} shows no secret`).not.toContain(SECRET);
      expect(text, `${where} shows no secret`).not.toContain(OTHER_SECRET);
    }
  });

  it('reloads sources.json: adds, removes and restarts pollers, and keeps the last good config through a broken edit', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 1) });
    const mail = await fixtureFiles(project, 'mail', { items: items('mail', 1) });
    const mailUrl = await httpFixture(mail);
    const calA = source('cal-a', 'cal');
    const calB = source('cal-b', 'cal', { tool: 'list_items' });
    const servers = { cal: stdioServer(cal), mail: { url: mailUrl } };
    await writeSources(project, { mcpServers: servers, sources: [calA, calB] });
    const daemon = await start(project);
    const callsOf = (name: string) => cal.calls((call) => call.args?.source === name);
    await eventually(
      'both cal sources polled',
      async () => (await callsOf('cal-a')).length > 0 && (await callsOf('cal-b')).length > 0,
    );

    // Add a source: it starts, and polls at once.
    await writeSources(project, { mcpServers: servers, sources: [calA, calB, source('mail-a', 'mail')] });
    await eventually('the added source polling', async () => (await mail.calls()).length > 0);
    expect(pollerOf(await getStatus(daemon), 'mail-a')).toBeDefined();

    // Remove one: it stops.
    await writeSources(project, { mcpServers: servers, sources: [calA, source('mail-a', 'mail')] });
    await eventually('cal-b gone from /status', async () => !pollerOf(await getStatus(daemon), 'cal-b'));
    const settledAt = (await callsOf('cal-a')).length;
    await eventually('one more poll of cal-a', async () => (await callsOf('cal-a')).length > settledAt);
    const removedCalls = (await callsOf('cal-b')).length;
    const keptAt = (await callsOf('cal-a')).length;
    await eventually('three more polls of cal-a', async () => (await callsOf('cal-a')).length >= keptAt + 3);
    expect(await callsOf('cal-b'), 'a removed source is not polled').toHaveLength(removedCalls);

    // Change one's args: it restarts with them, and the old ones are no longer sent.
    const changed = { ...calA, args: { source: 'cal-a', days: 7 } };
    await writeSources(project, { mcpServers: servers, sources: [changed, source('mail-a', 'mail')] });
    await eventually('a call with the new args', async () =>
      (await callsOf('cal-a')).some((call) => call.args?.days === 7),
    );
    await eventually(
      'three calls with the new args',
      async () => (await callsOf('cal-a')).filter((call) => call.args?.days === 7).length >= 3,
    );
    const calAcalls = await callsOf('cal-a');
    const firstNew = calAcalls.findIndex((call) => call.args?.days === 7);
    expect(
      calAcalls.slice(firstNew).every((call) => call.args?.days === 7),
      'no call with the old args after the restart',
    ).toBe(true);

    // A broken edit: the error shows, and the last good config keeps running.
    await writeSources(project, '{ "mcpServers": { "cal": ');
    const broken = await eventually('the config error in /status', async () => {
      const status = await getStatus(daemon);
      return status.sources.error ? status : undefined;
    });
    expect(broken.sources.error).toMatch(/sources\.json at line 1, column \d+: is not valid JSON/);
    expect(broken.sources.pollers.map((p) => p.source).sort()).toEqual(['cal-a', 'mail-a']);
    const pulseStatus = await runCli(['status', '--project', project]);
    expect(pulseStatus.stdout).toMatch(
      /sources: +ERROR .*is not valid JSON.*\(the last good config keeps running\)/,
    );
    const brokenAt = Date.now();
    await eventually('both sources still polled', async () => {
      const late = (calls: RecordLine[]) => calls.filter((call) => call.at > brokenAt).length >= 2;
      return late(await callsOf('cal-a')) && late(await mail.calls());
    });
    expect(
      (await callsOf('cal-a')).filter((call) => call.at > brokenAt).every((call) => call.args?.days === 7),
    ).toBe(true);

    // Fixing the file clears the error.
    await writeSources(project, { mcpServers: servers, sources: [changed, source('mail-a', 'mail')] });
    await eventually('the error cleared', async () => (await getStatus(daemon)).sources.error === null);
    // A restarted poller inserts nothing again; cal-b, added later, listed the item cal-a had let
    // in from the same server: one event, under cal-a.
    const { live, inserts } = await readInbox(project);
    expect(live.map((e) => `${e.source}/${e.item_id}`).sort()).toEqual(['cal-a/cal-1', 'mail-a/mail-1']);
    expect(inserts).toHaveLength(2);
  }, 60_000);

  it('pulse sources test NAME --json prints the listed items and marks nothing seen', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 2) });
    await writeSources(project, { mcpServers: { cal: stdioServer(cal) }, sources: [source('cal', 'cal')] });
    let daemon = await start(project);
    const seenPath = join(project, '.pulse', 'external_seen.jsonl');
    await eventually('two items in the inbox', async () => (await readInbox(project)).live.length === 2);
    // Marked seen just after the inbox write (by the source, then by its server): the snapshot below must include both.
    await eventually(
      'two items marked seen',
      async () => (await readJsonLines(seenPath).catch(() => [])).length === 4,
    );
    expect(await daemon.stop()).toBe(0);

    await cal.setControl({ items: items('cal', 4) });
    const seenBefore = await readFile(seenPath, 'utf8');
    const inboxBefore = await readFile(join(project, '.pulse', 'inbox.jsonl'), 'utf8');
    const calls = (await cal.calls()).length;

    const tested = await runCli(['sources', 'test', 'cal', '--project', project, '--json']);
    expect(tested.code, tested.stderr).toBe(0);
    const result = JSON.parse(tested.stdout) as {
      ok: boolean;
      items: Array<{ item_id: string; title: string }>;
    };
    expect(result.ok).toBe(true);
    expect(result.items.map((i) => i.item_id)).toEqual(['cal-1', 'cal-2', 'cal-3', 'cal-4']);
    expect(result.items[3]!.title).toBe('cal item 4');
    expect(await cal.calls(), 'the test really called the tool').toHaveLength(calls + 1);
    expect(await readFile(seenPath, 'utf8'), 'external_seen.jsonl unchanged').toBe(seenBefore);
    expect(await readFile(join(project, '.pulse', 'inbox.jsonl'), 'utf8')).toBe(inboxBefore);

    const unknown = await runCli(['sources', 'test', 'nope', '--project', project, '--json']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No source "nope" .*Known: cal/);

    // The items the test showed were not marked seen: the daemon lets them in.
    daemon = await start(project);
    await eventually('the two new items', async () => (await readInbox(project)).live.length === 4);
    expect(itemIds((await readInbox(project)).live)).toEqual(['cal-1', 'cal-2', 'cal-3', 'cal-4']);
  });

  it('prints the titles, names, errors and stderr of sources to the terminal without escape sequences or control characters, and keeps --json and pulse.log exact', async () => {
    const title = HOSTILE_TITLE;
    const name = 'cal\x1b]0;pwned\x07';
    const stderrLine = '\x1b]0;pwned\x07noise from cal';
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: [{ id: 'c1', title }] });
    const bad = await fixtureFiles(project, 'bad', {
      mode: 'isError',
      errorText: 'boom\x1b]0;pwned\x07 failed',
    });
    const calServer = fixtureCommand(cal.args);
    await writeSources(project, {
      mcpServers: {
        cal: {
          command: 'sh',
          args: [
            '-c',
            'printf \'%s\\n\' "$0" >&2; exec "$@"',
            stderrLine,
            calServer.command,
            ...calServer.args,
          ],
        },
        bad: stdioServer(bad),
      },
      sources: [source(name, 'cal'), source('bad', 'bad')],
    });
    const daemon = await start(project);
    await eventually('the title offered to agents and the failing source', async () => {
      const status = await getStatus(daemon);
      return status.gate.delivery?.events[0]?.title === title && pollerOf(status, 'bad')?.last_error;
    });
    const printed = (text: string) => expect(controlsIn(text), JSON.stringify(text)).toEqual([]);

    const status = await runCli(['status', '--project', project]);
    printed(status.stdout);
    expect(status.stdout).toContain(`"${HOSTILE_TITLE_SHOWN}"`);
    expect(status.stdout).toMatch(/source: +cal \(cal\.list_events/);
    expect(status.stdout).toContain('the tool answered isError: boom failed');
    const statusJson = JSON.parse((await runCli(['status', '--project', project, '--json'])).stdout);
    expect(statusJson.gate.delivery.events[0].title, '--json keeps the title exact').toBe(title);
    expect(statusJson.sources.pollers.map((p: Poller) => p.source)).toContain(name);

    const list = await runCli(['sources', 'list', '--project', project]);
    printed(list.stdout);
    expect(list.stdout).toMatch(/^- cal \(cal\.list_events/m);

    const tested = await runCli(['sources', 'test', name, '--project', project]);
    expect(tested.code, tested.stderr).toBe(0);
    printed(tested.stdout);
    expect(tested.stdout).toContain(`- c1  ${HOSTILE_TITLE_SHOWN}`);
    const testedJson = JSON.parse(
      (await runCli(['sources', 'test', name, '--project', project, '--json'])).stdout,
    );
    expect(testedJson.items[0].title).toBe(title);
    const failed = await runCli(['sources', 'test', 'bad', '--project', project]);
    expect(failed.code).toBe(1);
    printed(failed.stdout);
    expect(failed.stdout).toContain('bad: poll failed: ');
    expect(failed.stdout).toContain('boom failed');

    await eventually('the stderr line logged', async () => daemon.output().includes('noise from cal'));
    printed(daemon.output());
    const logged = await readJsonLines<{ msg: string }>(join(project, '.pulse', 'pulse.log'));
    expect(
      logged.map((line) => line.msg),
      'pulse.log keeps the line exact',
    ).toContain(stderrLine);
  });

  it('drops a source whose server is not configured, with a warning in pulse status and /status', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 1) });
    await writeSources(project, {
      mcpServers: { cal: stdioServer(cal) },
      sources: [source('cal', 'cal'), source('ghost', 'nowhere')],
    });
    const daemon = await start(project);
    await eventually('cal in the inbox', async () => (await readInbox(project)).live.length === 1);

    const warning =
      'source "ghost" names server "nowhere", which is not configured; it is ignored. Configured: cal';
    const status = await getStatus(daemon);
    expect(status.sources.warnings.some((w) => w.includes(warning))).toBe(true);
    expect(status.sources.pollers.map((p) => p.source)).toEqual(['cal']);
    expect(status.sources.error).toBeNull();
    const pulseStatus = await runCli(['status', '--project', project]);
    expect(pulseStatus.stdout).toContain(`warning:   ${warning}`);
    const { list } = await sourcesList(project);
    expect(list.pollers.map((p) => p.source)).toEqual(['cal']);
  });

  it('stops its stdio servers on shutdown, a busy one included: no orphan process', async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: items('cal', 1) });
    const slow = await fixtureFiles(project, 'slow', { items: items('slow', 1), delayMs: 60_000 });
    await writeSources(project, {
      mcpServers: { cal: stdioServer(cal), slow: stdioServer(slow) },
      sources: [source('cal', 'cal'), source('slow', 'slow')],
    });
    const daemon = await start(project);
    await eventually(
      'a call to each server',
      async () => (await cal.calls()).length > 0 && (await slow.calls()).length > 0,
    );
    const pids = [...(await cal.records()), ...(await slow.records())].map((line) => line.pid);
    expect(pids.every(isAlive)).toBe(true);

    expect(await daemon.stop()).toBe(0);
    await eventually('every server process gone', async () => !pids.some(isAlive), 3_000);
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`ends the process group of every stdio server on ${signal}: what a server, a busy one or one behind a shell, started dies with it`, async () => {
      const project = await newProject();
      const cal = await fixtureFiles(project, 'cal', { items: items('cal', 1) });
      const slow = await fixtureFiles(project, 'slow', { items: items('slow', 1), delayMs: 60_000 });
      const wrapped = await fixtureFiles(project, 'wrapped', { items: items('wrapped', 1) });
      await writeSources(project, {
        mcpServers: {
          cal: fixtureCommand([...cal.args, '--grandchild']),
          slow: fixtureCommand([...slow.args, '--grandchild']),
          wrapped: fixtureBehindShell([...wrapped.args, '--grandchild']),
        },
        sources: [source('cal', 'cal'), source('slow', 'slow'), source('wrapped', 'wrapped')],
      });
      const daemon = await start(project);
      const fixtures = [cal, slow, wrapped];
      await eventually('a call to each server', async () =>
        (await Promise.all(fixtures.map((files) => files.calls()))).every((calls) => calls.length > 0),
      );
      const families = await Promise.all(fixtures.map(fixtureFamily));
      const groups = families.map((family) => family.group!);
      expect(families.map((family) => family.grandchildGroup)).toEqual(groups);
      expect(groups, 'groups of their own, apart from the daemon and its terminal').not.toContain(
        groupOf(daemon.process.pid!),
      );
      // server and grandchild; shell, server and grandchild
      expect(groups.map((group) => groupMembers(group).length)).toEqual([2, 2, 3]);

      expect(await daemon.stop(signal)).toBe(0);
      expect(daemon.output()).toContain(`Received ${signal}; shutting down.`);
      // Killed before the daemon exited; dying takes the killed a moment.
      await eventually(
        'no process of any server group left',
        async () => groups.flatMap(groupMembers).length === 0,
        3_000,
      );
    });
  }

  it('pulse sources test, interrupted while its server is busy, exits 130 and leaves no process of the server group', async () => {
    const project = await newProject();
    const slow = await fixtureFiles(project, 'slow', { items: items('slow', 1), delayMs: 60_000 });
    await writeSources(project, {
      mcpServers: { slow: fixtureCommand([...slow.args, '--grandchild']) },
      sources: [source('slow', 'slow')],
    });
    const cli = spawn(process.execPath, [CLI, 'sources', 'test', 'slow', '--project', project]);
    started.children.push(cli);
    const exited = new Promise<number | null>((resolve) => cli.on('exit', (code) => resolve(code)));
    await eventually('the call under way', async () => (await slow.calls()).length > 0);
    const { group } = await fixtureFamily(slow);
    expect(groupMembers(group!)).toHaveLength(2);

    // Ctrl-C reaches the CLI only: the server runs in a group of its own.
    cli.kill('SIGINT');

    expect(await exited).toBe(130);
    await eventually(
      'no process of the server group left',
      async () => groupMembers(group!).length === 0,
      3_000,
    );
  });

  it('ends the process group of a stdio server that a sources.json edit changes or removes, and keeps the others', async () => {
    const project = await newProject();
    const kept = await fixtureFiles(project, 'kept', { items: items('kept', 1) });
    const changed = await fixtureFiles(project, 'changed', { items: items('changed', 1) });
    const removed = await fixtureFiles(project, 'removed', { items: items('removed', 1) });
    const servers = {
      kept: fixtureCommand([...kept.args, '--grandchild']),
      changed: { ...fixtureCommand([...changed.args, '--grandchild']), env: { FIXTURE_ECHO_ENV: 'v1' } },
      removed: fixtureBehindShell([...removed.args, '--grandchild']),
    };
    const sources = [source('kept', 'kept'), source('changed', 'changed'), source('removed', 'removed')];
    await writeSources(project, { mcpServers: servers, sources });
    await start(project);
    const fixtures = [kept, changed, removed];
    await eventually('a call to each server', async () =>
      (await Promise.all(fixtures.map((files) => files.calls()))).every((calls) => calls.length > 0),
    );
    const [keptGroup, changedGroup, removedGroup] = (await Promise.all(fixtures.map(fixtureFamily))).map(
      (family) => family.group!,
    );
    expect([keptGroup, changedGroup, removedGroup].map((group) => groupMembers(group!).length)).toEqual([
      2, 2, 3,
    ]);

    await writeSources(project, {
      mcpServers: { kept: servers.kept, changed: { ...servers.changed, env: { FIXTURE_ECHO_ENV: 'v2' } } },
      sources: sources.slice(0, 2),
    });

    await eventually('the changed server called with its new env', async () =>
      (await changed.calls()).some((call) => call.env === 'v2'),
    );
    await eventually(
      'no process left of the changed and the removed server groups',
      async () => groupMembers(changedGroup!).length === 0 && groupMembers(removedGroup!).length === 0,
    );
    expect(groupMembers(keptGroup!), 'the unchanged server and its grandchild still run').toHaveLength(2);
  });
});
