import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { type Control, type FixtureFiles, fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * A source's tool judged again when its server changes: a real `pulse start` polls the fixture
 * SDK server, whose tools/list then changes (annotations, a tool gone). pulse reads tools/list
 * once per connection, so the change counts once the server restarts, here on a config reload
 * (a new env value in sources.json): a tool now destructive is refused uncalled, a tool gone
 * fails its poll with the tools listed and the fix until it is listed again, and a tool read-only
 * again is polled again. A server whose only source is refused stays connected.
 */

interface PollerStatus {
  source: string;
  state: string;
  polls: number;
  last_error: string | null;
  tool_check: { hints: Record<string, boolean> | null; verdict: string; message: string | null } | null;
}

const READS = { readOnlyHint: true };
const DESTROYS = { readOnlyHint: false, destructiveHint: true };
const ITEMS = [{ id: 'a-1', title: 'Disk 91% full on db-2' }];

const started = trackStarted();
let project: string;
let acme: FixtureFiles;
let vault: FixtureFiles;
let daemon: RunningDaemon;

/** sources.json with the server's env at `generation`: a new value restarts the server. */
const writeSources = (generation: number) =>
  saveSources(
    project,
    JSON.stringify({
      mcpServers: {
        acme: { ...fixtureCommand(acme.args), env: { FIXTURE_ECHO_ENV: `v${generation}` } },
        vault: fixtureCommand(vault.args),
      },
      sources: [
        { name: 'events', server: 'acme', tool: 'list_events', interval_sec: 1 },
        { name: 'alerts', server: 'acme', tool: 'list_alerts', interval_sec: 1 },
        { name: 'sweep', server: 'vault', tool: 'list_items', interval_sec: 1 },
      ],
    }),
  );

const control = (annotations: Control['annotations'], tools: string[] = ['list_alerts']): Control => ({
  items: ITEMS,
  tools,
  annotations,
});

const pollerOf = async (name: string): Promise<PollerStatus> =>
  (
    (await (await fetch(new URL('/status', daemon.url))).json()) as { sources: { pollers: PollerStatus[] } }
  ).sources.pollers.find((p) => p.source === name)!;

/** Waits until the poller of `name` satisfies `check`, and returns it. */
const pollerWhere = (name: string, check: (p: PollerStatus) => boolean, what: string) =>
  waitUntil(
    async () => {
      const poller = await pollerOf(name);
      return poller !== undefined && check(poller) && poller;
    },
    { timeoutMs: 20_000, intervalMs: 100, describe: () => `${name}: ${what}` },
  );

/** The server processes that answered `initialize`: one per (re)start. */
const initializes = async () => (await acme.records()).filter((r) => r.kind === 'initialize');

/** Restarts the server through a config reload and waits until the new one has answered. */
const reloadServer = async (generation: number) => {
  await writeSources(generation);
  await waitUntil(async () => (await initializes()).some((r) => r.env === `v${generation}`), {
    timeoutMs: 20_000,
    describe: () => `the server restarted with v${generation}`,
  });
};

beforeAll(async () => {
  project = await tempProject('pulse-tool-changes-');
  started.projects.push(project);
  await mkdir(join(project, '.pulse'), { recursive: true });
  acme = await fixtureFiles(project, 'acme', control({ list_events: READS, list_alerts: READS }));
  vault = await fixtureFiles(project, 'vault', { items: ITEMS, annotations: { list_items: DESTROYS } });
  await writeSources(1);
  daemon = await startDaemon(project);
  started.daemons.push(daemon);
});

afterAll(() => started.cleanUp());

describe("a source's tool whose server changes what it lists", () => {
  it('refuses a tool that says it is destructive after its server restarts, and polls it again once it reads only', async () => {
    await pollerWhere('events', (p) => p.tool_check?.verdict === 'read_only' && p.polls >= 1, 'polled');

    await acme.setControl(control({ list_events: DESTROYS, list_alerts: READS }));
    await reloadServer(2);
    const refused = await pollerWhere('events', (p) => p.state === 'refused', 'refused');
    expect(refused.tool_check).toMatchObject({ verdict: 'refused', hints: DESTROYS });
    expect(refused.last_error).toBe(
      'source "events" is not polled: tool "list_events" of server "acme" says it is destructive (readOnlyHint: false, destructiveHint: true), and a source calls its tool every interval, so its side effect would repeat forever. Pick a tool that only reads (readOnlyHint: true), or, if calling this one on a schedule is what you want, add "allow_side_effects": true to the source in .pulse/sources.json.',
    );
    // The restarted server is never asked to run it, while the other source goes on polling it.
    const alertsPolls = (await pollerOf('alerts')).polls;
    await pollerWhere('alerts', (p) => p.polls >= alertsPolls + 2, 'polled twice more');
    expect(await acme.calls((c) => c.tool === 'list_events' && c.env === 'v2')).toEqual([]);

    await acme.setControl(control({ list_events: READS, list_alerts: READS }));
    await reloadServer(3);
    await pollerWhere(
      'events',
      (p) => p.tool_check?.verdict === 'read_only' && p.polls >= 1 && p.last_error === null,
      'polled again',
    );
    expect((await acme.calls((c) => c.tool === 'list_events' && c.env === 'v3')).length).toBeGreaterThan(0);
  });

  it('fails the poll of a tool its server no longer lists, naming the tools it does and the fix, until it is back', async () => {
    await pollerWhere('alerts', (p) => p.tool_check?.verdict === 'read_only', 'judged');
    await acme.setControl(control({ list_events: READS }, []));
    await reloadServer(4);
    const gone = await pollerWhere(
      'alerts',
      (p) => p.last_error?.includes('lists no tool') === true,
      'failing',
    );
    expect(gone.state).toBe('backingOff');
    expect(gone.last_error).toBe(
      'server "acme" lists no tool "list_alerts" in tools/list (its tools: list_items, list_events, list_messages); fix "tool" in source "alerts"',
    );
    expect(await acme.calls((c) => c.tool === 'list_alerts' && c.env === 'v4')).toEqual([]);
    await pollerWhere('events', (p) => p.polls >= 2 && p.last_error === null, 'polling on');

    // Back in the list, without a restart or a list_changed notification: the next retry finds it.
    await acme.setControl(control({ list_events: READS, list_alerts: READS }));
    await pollerWhere('alerts', (p) => p.last_error === null && p.state !== 'backingOff', 'polled again');
    expect((await acme.calls((c) => c.tool === 'list_alerts' && c.env === 'v4')).length).toBeGreaterThan(0);
  });

  it("keeps a server whose only source is refused connected: the refusal is the source's, shown under it", async () => {
    await pollerWhere('sweep', (p) => p.state === 'refused', 'refused');
    const servers = (
      (await (await fetch(new URL('/status', daemon.url))).json()) as {
        sources: { servers: Array<{ name: string; state: string; detail: string | null }> };
      }
    ).sources.servers;
    expect(servers.find((s) => s.name === 'vault')).toMatchObject({ state: 'connected', detail: null });
    const list = await runCli(['sources', 'list', '--project', project]);
    const lines = list.stdout.split('\n');
    expect(lines.find((l) => l.startsWith('- vault ('))).toMatch(/\): connected$/);
    expect(lines.find((l) => l.startsWith('- sweep '))).toContain('REFUSED: source "sweep" is not polled');
    expect(await vault.calls()).toEqual([]);
  });
});
