import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import type { CheckIn, EventsAck } from '../support/protocol.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * One item, one mention: two sources of one server read the same issues (one tool per reading,
 * as a list and as a search), and a real `pulse start` tells each issue once, under the source
 * that listed it first, says in the context that the other listed it too, and remembers it
 * across a restart, for a source added afterwards as well.
 */

const started = trackStarted();
afterEach(() => started.cleanUp());

const LOGIN = 'Login 500s for SSO users';
const ISSUES = [
  { id: '1347', title: LOGIN, html_url: 'https://git.example/acme/issues/1347' },
  { id: '1348', title: 'Docs typo in the README' },
];
const READS = { readOnlyHint: true };

const start = async (project: string) => {
  const daemon = await startDaemon(project);
  started.daemons.push(daemon);
  const agent = await connectClient(daemon.url);
  started.clients.push(agent);
  return { daemon, agent };
};

const checkIn = (agent: Awaited<ReturnType<typeof connectClient>>) =>
  callTool<CheckIn>(agent, 'pulse_should_interrupt', {});

const pollsOf = async (daemon: RunningDaemon) =>
  (
    (await (await fetch(new URL('/status', daemon.url))).json()) as {
      sources: { pollers: Array<{ source: string; polls: number; state: string }> };
    }
  ).sources.pollers;

describe('an item two sources of one server list', () => {
  it('is told once, under the first source, said to be listed by the other too, and stays one across a restart', async () => {
    const project = await tempProject('pulse-same-item-');
    started.projects.push(project);
    await mkdir(join(project, '.pulse'), { recursive: true });
    const git = await fixtureFiles(project, 'git', {
      items: ISSUES,
      annotations: { list_items: READS, list_events: READS, list_messages: READS },
    });
    const sourcesJson = (names: Array<[string, string]>) =>
      saveSources(
        project,
        JSON.stringify({
          mcpServers: { git: fixtureCommand(git.args) },
          sources: names.map(([name, tool]) => ({ name, server: 'git', tool, interval_sec: 1 })),
        }),
      );
    await sourcesJson([
      ['issues', 'list_items'],
      ['issues-search', 'list_events'],
    ]);
    const { daemon, agent } = await start(project);

    const answer = await waitUntil(
      async () => {
        const check = await checkIn(agent);
        return check.needs_attention && check;
      },
      { timeoutMs: 20_000, intervalMs: 100, describe: () => 'a delivery' },
    );
    const titles = answer.external_events.map((e) => e.title);
    expect(titles.sort(), 'each issue once').toEqual([ISSUES[1]!.title, LOGIN].sort());
    const first = answer.external_events[0]!.source;
    expect(new Set(answer.external_events.map((e) => e.source)), 'under one source, the first').toEqual(
      new Set([first]),
    );
    const other = first === 'issues' ? 'issues-search' : 'issues';
    expect(
      (await callTool<EventsAck>(agent, 'pulse_ack_events', { delivery_id: answer.delivery_id })).accepted,
    ).toBe(true);

    const context = async () =>
      ((await agent.readResource({ uri: 'pulse://context/latest' })).contents[0] as { text: string }).text;
    expect(await context()).toMatch(
      new RegExp(
        `\\[${first}\\] "${LOGIN}": also listed by \\[${other}\\], the same item: one event, under \\[${first}\\]`,
      ),
    );

    // Both sources keep listing them, every second: nothing comes again.
    const after = (await pollsOf(daemon)).map((p) => p.polls);
    await waitUntil(async () => (await pollsOf(daemon)).every((p, i) => p.polls >= after[i]! + 2), {
      timeoutMs: 15_000,
    });
    expect((await checkIn(agent)).needs_attention).toBe(false);

    // After a restart, a third source of the server reading the same issues tells nothing either.
    await daemon.stop();
    await sourcesJson([
      ['issues', 'list_items'],
      ['issues-search', 'list_events'],
      ['issues-mine', 'list_messages'],
    ]);
    const again = await start(project);
    await waitUntil(
      async () => {
        const pollers = await pollsOf(again.daemon);
        return pollers.length === 3 && pollers.every((p) => p.polls >= 2);
      },
      { timeoutMs: 15_000, describe: () => 'every source polled twice' },
    );
    expect((await checkIn(again.agent)).needs_attention).toBe(false);
    const calls = await git.calls((c) => c.tool === 'list_messages');
    expect(calls.length, 'the third source did poll').toBeGreaterThan(0);
  });
});
