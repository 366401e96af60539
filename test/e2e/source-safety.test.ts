import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { type FixtureFiles, fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';
import { saveSources } from '../support/trust.js';

/*
 * Sources poll only tools that say they do no harm: a real `pulse start` reads each tool's
 * annotations from `tools/list` of two real servers, @modelcontextprotocol/server-everything
 * (whose tools declare them) and the fixture SDK server (whose control gives each tool the
 * annotations of one case), and polls, warns or refuses accordingly. The fixture records every
 * call, so a refused tool is seen never to be called.
 */

const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

interface PollerStatus {
  source: string;
  state: string;
  polls: number;
  last_error: string | null;
  tool_check: {
    hints: Record<string, boolean> | null;
    verdict: 'read_only' | 'undeclared' | 'allowed' | 'refused';
    message: string | null;
  } | null;
}

const started = trackStarted();
let project: string;
let acme: FixtureFiles;
let daemon: RunningDaemon;

/** The sources: one per annotation case on the fixture, a read-only and a writing tool of server-everything. */
const SOURCES = [
  { name: 'acme-events', server: 'acme', tool: 'list_events' },
  { name: 'acme-items', server: 'acme', tool: 'list_items' },
  { name: 'acme-messages', server: 'acme', tool: 'list_messages' },
  { name: 'acme-purge', server: 'acme', tool: 'delete_items', args: { who: 'refused' } },
  {
    name: 'acme-purge-allowed',
    server: 'acme',
    tool: 'delete_items',
    args: { who: 'allowed' },
    allow_side_effects: true,
  },
  { name: 'everything-links', server: 'everything', tool: 'get-resource-links', args: { count: 1 } },
  { name: 'everything-logging', server: 'everything', tool: 'toggle-simulated-logging' },
];

const writeSources = (sources: readonly Record<string, unknown>[]) =>
  saveSources(
    project,
    JSON.stringify({
      mcpServers: {
        acme: fixtureCommand(acme.args),
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      },
      sources: sources.map((source) => ({ interval_sec: 300, ...source })),
    }),
  );

const pollers = async (): Promise<PollerStatus[]> =>
  ((await (await fetch(new URL('/status', daemon.url))).json()) as { sources: { pollers: PollerStatus[] } })
    .sources.pollers;

const pollerOf = async (name: string) => (await pollers()).find((p) => p.source === name)!;

/** Waits until every source's tool has been judged. */
const allJudged = () =>
  waitUntil(
    async () => {
      const all = await pollers();
      return all.every((p) => p.tool_check !== null) && all;
    },
    { timeoutMs: 20_000, intervalMs: 100, describe: () => 'every tool judged' },
  );

beforeAll(async () => {
  project = await tempProject('pulse-source-safety-');
  started.projects.push(project);
  await mkdir(join(project, '.pulse'), { recursive: true });
  acme = await fixtureFiles(project, 'acme', {
    items: [{ id: 'acme-1', title: 'Login 500s for SSO users' }],
    tools: ['delete_items'],
    annotations: {
      list_events: { readOnlyHint: true, openWorldHint: true },
      list_messages: { readOnlyHint: false, destructiveHint: false },
      delete_items: { destructiveHint: true },
    },
  });
  await writeSources(SOURCES);
  daemon = await startDaemon(project);
  started.daemons.push(daemon);
});

afterAll(() => started.cleanUp());

describe('sources poll only tools that say they do no harm', () => {
  it('polls read-only tools, warns about one that says nothing, and refuses writing or destructive ones uncalled', async () => {
    const all = await allJudged();
    const verdicts = Object.fromEntries(all.map((p) => [p.source, [p.state, p.tool_check!.verdict]]));
    expect(verdicts).toEqual({
      'acme-events': [expect.any(String), 'read_only'],
      'acme-items': [expect.any(String), 'undeclared'],
      'acme-messages': ['refused', 'refused'],
      'acme-purge': ['refused', 'refused'],
      'acme-purge-allowed': [expect.any(String), 'allowed'],
      'everything-links': [expect.any(String), 'read_only'],
      'everything-logging': ['refused', 'refused'],
    });
    const byName = Object.fromEntries(all.map((p) => [p.source, p]));
    expect(byName['everything-links']!.tool_check!.hints).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    // The refusal names the source, the tool, its annotations and the fix.
    expect(byName['acme-purge']!.last_error).toBe(
      'source "acme-purge" is not polled: tool "delete_items" of server "acme" says it is destructive (destructiveHint: true), and a source calls its tool every interval, so its side effect would repeat forever. Pick a tool that only reads (readOnlyHint: true), or, if calling this one on a schedule is what you want, add "allow_side_effects": true to the source in .pulse/sources.json.',
    );
    expect(byName['everything-logging']!.last_error).toContain(
      'tool "toggle-simulated-logging" of server "everything" says it is not read-only (readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false)',
    );
    expect(byName['acme-items']!.tool_check!.message).toBe(
      'tool "list_items" of server "acme" does not declare itself read-only (no annotations): source "acme-items" polls it every interval, so make sure it only reads.',
    );

    // The refused tools were never called; the allowed one and the others were.
    const calls = await acme.calls();
    expect(calls.filter((c) => c.tool === 'list_messages')).toEqual([]);
    expect(calls.filter((c) => c.tool === 'delete_items').map((c) => c.args)).toEqual([{ who: 'allowed' }]);
    expect(new Set(calls.map((c) => c.tool))).toEqual(new Set(['list_events', 'list_items', 'delete_items']));

    // The daemon and the other sources run on: a refusal is the source's problem, not the daemon's.
    const health = await fetch(new URL('/healthz', daemon.url));
    expect(health.status).toBe(200);
    await waitUntil(
      async () =>
        (await pollerOf('everything-links')).polls > 0 &&
        (await pollerOf('everything-links')).state === 'waiting',
    );
  });

  it('shows the annotations and the refusal in pulse status, sources list and sources test, which calls no refused tool either', async () => {
    await allJudged();
    const status = await runCli(['status', '--project', project]);
    expect(status.stdout).toContain(
      'source:    acme-purge (acme.delete_items, every 300s): REFUSED: source "acme-purge" is not polled: tool "delete_items" of server "acme" says it is destructive (destructiveHint: true)',
    );
    expect(status.stdout).toContain(
      'warning:   tool "list_items" of server "acme" does not declare itself read-only (no annotations)',
    );

    const list = await runCli(['sources', 'list', '--project', project]);
    expect(list.code).toBe(0);
    const lines = list.stdout.split('\n');
    const lineAfter = (source: string) => lines[lines.findIndex((l) => l.startsWith(`- ${source} `)) + 1];
    expect(lineAfter('acme-events')).toBe(
      '  tool annotations: readOnlyHint: true, openWorldHint: true (read-only: polled)',
    );
    expect(lineAfter('acme-items')).toBe(
      '  tool annotations: no annotations (not declared read-only: polled, with a warning)',
    );
    expect(lines).toContain(
      '  warning: tool "list_items" of server "acme" does not declare itself read-only (no annotations): source "acme-items" polls it every interval, so make sure it only reads.',
    );
    expect(lineAfter('acme-purge-allowed')).toBe(
      '  tool annotations: destructiveHint: true (side effects, allowed by the source: polled)',
    );

    const refused = await runCli(['sources', 'test', 'acme-purge', '--project', project]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('acme-purge: refused, not called: source "acme-purge" is not polled:');
    expect(refused.stdout).toContain('tool annotations: destructiveHint: true (side effects: not polled)');
    const links = await runCli(['sources', 'test', 'everything-links', '--project', project]);
    expect(links.code).toBe(0);
    expect(links.stdout).toContain(
      'tool annotations: readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false (read-only: polled)',
    );
    expect((await acme.calls((c) => c.tool === 'delete_items')).map((c) => c.args)).toEqual([
      { who: 'allowed' },
    ]);
  });

  it('polls a refused tool once its source says "allow_side_effects": true, without a restart', async () => {
    await allJudged();
    await writeSources(
      SOURCES.map((source) =>
        source.name === 'acme-messages' ? { ...source, allow_side_effects: true } : source,
      ),
    );
    const allowed = await waitUntil(
      async () => {
        const poller = await pollerOf('acme-messages');
        return poller.tool_check?.verdict === 'allowed' && poller;
      },
      { timeoutMs: 20_000, intervalMs: 100, describe: () => 'acme-messages allowed' },
    );
    expect(allowed.state).not.toBe('refused');
    expect(allowed.tool_check!.message).toBe(
      'tool "list_messages" of server "acme" says it is not read-only (readOnlyHint: false, destructiveHint: false); source "acme-messages" polls it all the same: it says "allow_side_effects": true.',
    );
    await waitUntil(async () => (await acme.calls((c) => c.tool === 'list_messages')).length === 1);
    expect((await pollerOf('acme-purge')).state, 'the other refusal stands').toBe('refused');
  });
});
