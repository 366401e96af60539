import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerStatus, SystemStatus } from '../../src/system/system-status.js';
import { type RunningDaemon, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { readJsonLines } from '../support/files.js';
import {
  type FixtureFiles,
  fixtureCommand,
  fixtureFiles,
  startHttpFixture,
} from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { controlsIn, HOSTILE_TITLE, HOSTILE_TITLE_SHOWN } from '../support/terminal.js';
import { saveSources } from '../support/trust.js';

/*
 * Which environment sources run with, and what the CLI shows of them: a real `pulse start` with
 * real fixture MCP servers (stdio and HTTP), an unset `${VAR}` that must disable its own server
 * only, a variable only the daemon has that `pulse sources test` must see, and `pulse sources
 * list` from the daemon and from the file.
 */

const MAIL_SECRET = 'mail-s3cret-value';
const DAEMON_ONLY_SECRET = 'only-the-daemon-has-it';

const started = trackStarted();

afterEach(started.cleanUp);

const newProject = async () => {
  const project = await tempProject('pulse-sources-env-');
  started.projects.push(project);
  return project;
};

const start = async (project: string, env: Record<string, string> = {}) => {
  const daemon = await startDaemon(project, { env });
  started.daemons.push(daemon);
  return daemon;
};

const writeSources = async (project: string, config: unknown) => {
  await mkdir(join(project, '.pulse'), { recursive: true });
  await saveSources(project, typeof config === 'string' ? config : JSON.stringify(config));
};

const getStatus = async (daemon: RunningDaemon): Promise<SystemStatus> =>
  (await (await fetch(new URL('/status', daemon.url))).json()) as SystemStatus;

const source = (name: string, server: string, extra: Record<string, unknown> = {}) => ({
  name,
  server,
  tool: 'list_events',
  args: { source: name },
  interval_sec: 300,
  ...extra,
});

const inboxItems = async (project: string) =>
  (
    await readJsonLines<{ op: string; event?: { source: string; item_id: string } }>(
      join(project, '.pulse', 'inbox.jsonl'),
    )
  )
    .filter((row) => row.op === 'insert')
    .map((row) => `${row.event!.source}/${row.event!.item_id}`);

interface TestJson {
  source: string;
  server: string;
  ok: boolean;
  error: string | null;
  items: Array<{ item_id: string; title: string }>;
  item_count: number;
  ran_in: string;
  note: string | null;
  raw: { text: string; cut: number; keys: Array<{ where: string; keys: string[] }> } | null;
}

const sourcesTest = async (
  project: string,
  name: string,
  flags: string[] = [],
  env: Record<string, string> = {},
) => {
  const run = await runCli(['sources', 'test', name, '--project', project, ...flags], { env });
  return { ...run, json: flags.includes('--json') ? (JSON.parse(run.stdout) as TestJson) : null };
};

const serverNamed = (servers: ServerStatus[], name: string) => servers.find((s) => s.name === name);

/** cal (stdio), mail (http, bearer token from MAIL_TOKEN, its source switched off) and gh (GITHUB_TOKEN unset). */
const threeServers = async (project: string) => {
  const cal = await fixtureFiles(project, 'cal', { items: [{ id: 'c1', title: 'Standup' }] });
  const gh = await fixtureFiles(project, 'gh', { items: [{ id: 'g1', title: 'Review' }] });
  const mail = await fixtureFiles(project, 'mail', { items: [] });
  const mailUrl = await startHttpFixture(mail.args, (child) => started.children.push(child));
  await writeSources(project, {
    mcpServers: {
      cal: fixtureCommand(cal.args),
      mail: { url: mailUrl, bearer_token: '${MAIL_TOKEN}' },
      gh: { ...fixtureCommand(gh.args), env: { FIXTURE_ECHO_ENV: '${PULSE_TEST_UNSET_GITHUB_TOKEN}' } },
    },
    sources: [source('cal', 'cal'), source('mail', 'mail', { enabled: false }), source('gh-notes', 'gh')],
  });
  return { cal, gh, mail, mailUrl };
};

describe('an unset ${VAR} disables only the server that uses it', () => {
  it('runs the other sources, and status, sources list and sources test name the variable, the server and the fix', async () => {
    const project = await newProject();
    const { gh, mailUrl } = await threeServers(project);
    const daemon = await start(project, { MAIL_TOKEN: MAIL_SECRET });

    await waitUntil(async () => (await inboxItems(project)).includes('cal/c1'), {
      timeoutMs: 15_000,
      describe: () => "cal's item in the inbox",
    });
    const status = await waitUntil(
      async () => {
        const current = await getStatus(daemon);
        return serverNamed(current.sources.servers, 'cal')?.state === 'connected' && current;
      },
      { timeoutMs: 10_000, describe: () => 'cal connected in /status' },
    );
    expect(await gh.records(), 'the disabled server is never started').toEqual([]);
    expect(status.sources.error).toBeNull();
    const ghNotes = status.sources.pollers.find((p) => p.source === 'gh-notes')!;
    expect(ghNotes.state).toBe('disabled');
    expect(ghNotes.disabled_reason).toMatch(
      /^server "gh" is disabled: \$\{PULSE_TEST_UNSET_GITHUB_TOKEN\} is not set in the environment \(.*sources\.json at mcpServers\.gh\.env\.FIXTURE_ECHO_ENV\)\. Export PULSE_TEST_UNSET_GITHUB_TOKEN=… in the shell that starts pulse, then restart pulse/,
    );
    expect(status.actors.map((a) => a.id)).not.toContain('poller:gh-notes');
    expect(serverNamed(status.sources.servers, 'gh')).toMatchObject({
      state: 'disabled',
      transport: 'stdio',
    });
    expect(serverNamed(status.sources.servers, 'mail')).toMatchObject({
      state: 'unused',
      transport: 'http',
      target: mailUrl,
      headers: ['Authorization'],
    });

    const pulseStatus = await runCli(['status', '--project', project]);
    expect(pulseStatus.stdout).toMatch(
      /^warning: +server "gh" is disabled, its source gh-notes does not run: \$\{PULSE_TEST_UNSET_GITHUB_TOKEN\} is not set/m,
    );
    expect(pulseStatus.stdout).not.toContain('last good config');

    const list = await runCli(['sources', 'list', '--project', project]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^daemon running/);
    expect(list.stdout).toMatch(
      /^- cal \(stdio: \S+ \S+source-server\.mjs --control \S+ --record \S+; timeout 30 s\): connected$/m,
    );
    expect(list.stdout).toMatch(
      new RegExp(
        `^- mail \\(http: ${mailUrl.replace(/[.]/g, '\\.')}; headers Authorization: \\*\\*\\*; timeout 30 s\\): unused$`,
        'm',
      ),
    );
    expect(list.stdout).toMatch(
      /^- gh \(stdio: .*; env FIXTURE_ECHO_ENV=\*\*\*; timeout 30 s\): disabled: \$\{PULSE_TEST_UNSET_GITHUB_TOKEN\} is not set/m,
    );
    expect(list.stdout).toMatch(/^- cal \(cal\.list_events, every 300s\): waiting, 1 items, last poll \S+Z/m);
    expect(list.stdout).toMatch(
      /^- mail \(mail\.list_events, every 300s\): disabled: "enabled": false in sources\.json$/m,
    );
    expect(list.stdout).toMatch(
      /^- gh-notes \(gh\.list_events, every 300s\): disabled: its server "gh" is disabled \(above\)$/m,
    );

    const tested = await sourcesTest(project, 'gh-notes');
    expect(tested.code).toBe(1);
    expect(tested.stdout).toMatch(
      /^gh-notes: poll failed: source "gh-notes" cannot run: server "gh" is disabled: \$\{PULSE_TEST_UNSET_GITHUB_TOKEN\} is not set/m,
    );
    expect(tested.stdout, 'the error names its own server only').not.toMatch(/"cal"|"mail"/);
    expect(await gh.records()).toEqual([]);
    const calTested = await sourcesTest(project, 'cal', ['--json']);
    expect(calTested.json).toMatchObject({ ok: true, ran_in: 'daemon', note: null, item_count: 1 });

    for (const text of [JSON.stringify(status), pulseStatus.stdout, list.stdout, daemon.output()])
      expect(text).not.toContain(MAIL_SECRET);
  }, 60_000);

  it('lists servers and sources from the file when no daemon runs, with --json', async () => {
    const project = await newProject();
    const { mailUrl } = await threeServers(project);
    const env = { MAIL_TOKEN: MAIL_SECRET };

    const text = await runCli(['sources', 'list', '--project', project], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^daemon not running: read from \.pulse\/sources\.json/);
    expect(text.stdout).toMatch(/^- cal \(stdio: .*\): not running$/m);
    expect(text.stdout).toMatch(
      /^- gh \(stdio: .*\): disabled: \$\{PULSE_TEST_UNSET_GITHUB_TOKEN\} is not set/m,
    );
    expect(text.stdout).toMatch(/^- cal \(cal\.list_events, every 300s\): not running/m);
    expect(text.stdout, "the server's line says it: no warning repeats it").not.toContain(
      'warning: server "gh"',
    );

    const json = await runCli(['sources', 'list', '--project', project, '--json'], { env });
    const list = JSON.parse(json.stdout) as {
      running: boolean;
      servers: ServerStatus[];
      pollers: SystemStatus['sources']['pollers'];
    };
    expect(list.running).toBe(false);
    expect(list.servers.map((s) => [s.name, s.transport, s.state])).toEqual([
      ['cal', 'stdio', 'not running'],
      ['mail', 'http', 'not running'],
      ['gh', 'stdio', 'disabled'],
    ]);
    expect(serverNamed(list.servers, 'mail')).toMatchObject({
      target: mailUrl,
      headers: ['Authorization'],
      timeout_sec: 30,
    });
    expect(list.pollers.map((p) => [p.source, p.state, p.enabled])).toEqual([
      ['cal', 'not running', true],
      ['mail', 'disabled', false],
      ['gh-notes', 'disabled', true],
    ]);
    expect(json.stdout + text.stdout).not.toContain(MAIL_SECRET);
  });

  it('says no source runs, rather than that a last good config does, when sources.json is broken at start', async () => {
    const project = await newProject();
    await writeSources(project, '{ "mcpServers": ');
    const daemon = await start(project);
    await waitUntil(async () => (await getStatus(daemon)).sources.error !== null, {
      describe: () => 'the config error',
    });
    const status = await runCli(['status', '--project', project]);
    expect(status.stdout).toMatch(
      /^sources: +ERROR .*is not valid JSON.*\(no source runs until it is fixed\)$/m,
    );
    expect(status.stdout).not.toContain('last good config');
    const list = await runCli(['sources', 'list', '--project', project]);
    expect(list.stdout).toMatch(/^config error: .*\(no source runs until it is fixed\)$/m);
  });
});

describe('pulse sources test', () => {
  it("asks the running daemon, whose environment sets a variable the CLI's lacks; without a daemon it tests here and says so", async () => {
    const project = await newProject();
    const cal = await fixtureFiles(project, 'cal', { items: [{ id: 'c1', title: 'Standup' }] });
    await writeSources(project, {
      mcpServers: {
        cal: { ...fixtureCommand(cal.args), env: { FIXTURE_ECHO_ENV: '${PULSE_TEST_DAEMON_ONLY}' } },
      },
      sources: [source('cal', 'cal')],
    });
    const daemon = await start(project, { PULSE_TEST_DAEMON_ONLY: DAEMON_ONLY_SECRET });
    await waitUntil(async () => (await cal.calls()).length === 1, {
      timeoutMs: 15_000,
      describe: () => 'the first poll',
    });

    const tested = await sourcesTest(project, 'cal', ['--json']);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.json).toMatchObject({
      source: 'cal',
      server: 'cal',
      ok: true,
      ran_in: 'daemon',
      note: null,
    });
    expect(tested.json!.items).toEqual([{ item_id: 'c1', title: 'Standup', starts_at: null }]);
    const calls = await cal.calls();
    expect(calls, 'the test called the tool once more').toHaveLength(2);
    expect(calls[1]!.env, "the call ran in a server started with the daemon's environment").toBe(
      DAEMON_ONLY_SECRET,
    );
    expect(calls[1]!.pid, "through the daemon's own client: the same server process").toBe(calls[0]!.pid);
    expect(tested.stdout).not.toContain(DAEMON_ONLY_SECRET);
    const text = await sourcesTest(project, 'cal');
    expect(text.stdout).toBe(
      [
        'cal: 1 item(s) (nothing marked seen)',
        '- c1  Standup',
        'tool annotations: no annotations (not declared read-only: polled, with a warning)',
        'warning: tool "list_events" of server "cal" does not declare itself read-only (no annotations): source "cal" polls it every interval, so make sure it only reads.',
        '',
      ].join('\n'),
    );

    const unknown = await sourcesTest(project, 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No source "nope" in sources.json. Known: cal.');
    const badBody = await fetch(new URL('/sources/test', daemon.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": 1}',
    });
    expect(badBody.status).toBe(400);
    expect(((await badBody.json()) as { error: string }).error).toContain(
      '{"source": "<name in sources.json>"',
    );

    expect(await daemon.stop()).toBe(0);
    const here = await sourcesTest(project, 'cal', ['--json']);
    expect(here.code).toBe(1);
    expect(here.json).toMatchObject({ ok: false, ran_in: 'this shell' });
    expect(here.json!.note).toBe(
      "No daemon runs for this project: tested with this shell's environment, which may differ from the one pulse starts with.",
    );
    expect(here.json!.error).toMatch(
      /^source "cal" cannot run: server "cal" is disabled: \$\{PULSE_TEST_DAEMON_ONLY\} is not set/,
    );
    const withVariable = await sourcesTest(project, 'cal', [], { PULSE_TEST_DAEMON_ONLY: 'from-this-shell' });
    expect(withVariable.code, withVariable.stderr).toBe(0);
    expect(withVariable.stdout).toMatch(/^note: .*tested with this shell's environment/);
    expect((await cal.calls()).at(-1)!.env).toBe('from-this-shell');
  }, 60_000);

  it('--raw prints what the tool answered, cut to a bound and without control characters, and the keys found', async () => {
    const project = await newProject();
    const items = Array.from({ length: 300 }, (_, i) => ({
      id: `i${i}`,
      title: i === 0 ? HOSTILE_TITLE : `item ${i} ${'x'.repeat(80)}`,
    }));
    const feed: FixtureFiles = await fixtureFiles(project, 'feed', { items });
    const bad = await fixtureFiles(project, 'bad', { mode: 'garbage' });
    await writeSources(project, {
      mcpServers: { feed: fixtureCommand(feed.args), bad: fixtureCommand(bad.args) },
      sources: [source('feed', 'feed'), source('bad', 'bad')],
    });
    await start(project);

    const text = await sourcesTest(project, 'feed', ['--raw']);
    expect(text.code, text.stderr).toBe(0);
    expect(controlsIn(text.stdout)).toEqual([]);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe('feed: 300 item(s) (nothing marked seen)');
    expect(lines[1]).toBe(`- i0  ${HOSTILE_TITLE_SHOWN}`);
    expect(lines).toContain('… and 100 more');
    expect(lines).toContain('keys found:');
    expect(lines).toContain('  the top level: content, structuredContent');
    expect(lines).toContain('  structuredContent: items');
    expect(lines).toContain('  content[0] text JSON: items');
    const header = lines.find((line) => line.startsWith('what the tool answered'))!;
    expect(header).toMatch(/^what the tool answered \(the first 20000 characters; \d+ more cut\):$/);
    const answered = lines.slice(lines.indexOf(header) + 1).join('\n');
    expect(answered.startsWith('{\n  "content": [\n    {\n      "type": "text",')).toBe(true);
    expect(answered.length).toBeLessThanOrEqual(20_001);

    const json = await sourcesTest(project, 'feed', ['--raw', '--json']);
    expect(json.json!.raw!.cut).toBeGreaterThan(0);
    expect(json.json!.raw!.text).toHaveLength(20_000);
    expect(json.json!.items).toHaveLength(200);
    expect(json.json!.item_count).toBe(300);

    const failed = await sourcesTest(project, 'bad', ['--raw']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^bad: poll failed: server "bad", tool "list_events": no list found/m);
    expect(failed.stdout).toContain('  content[0] text (not JSON): (none)');
    expect(failed.stdout).toContain('"text": "this is not JSON {"');
    const plain = await sourcesTest(project, 'feed');
    expect(plain.stdout, 'without --raw, no answer').not.toContain('keys found');
  }, 60_000);
});
