import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxEvent } from '../../machines/external.js';
import type { SystemStatus } from '../../src/system/system-status.js';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  removeProject,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { readJsonLines } from '../support/files.js';
import type { CheckIn, EventsAck, ExternalEvent } from '../support/protocol.js';
import { rowsMissingFrom, sourcesDoc, summarizeRead, tableRow } from '../support/read-summary.js';
import { fixtureFiles, startHttpFixture } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';

/*
 * MCP servers nobody here wrote, installed from npm (pinned in devDependencies) and spawned by
 * the daemon over stdio, plus a server that answers exactly as the Python SDK's FastMCP does
 * (over HTTP, behind a bearer token): pip's `mcp` is not reachable here. Each server is polled
 * by two sources, without and with a `map`; the test reads what the agent is told, through
 * `pulse_should_interrupt`, and checks docs/sources.md's table says the same.
 */

const fromRoot = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const MEMORY = fromRoot('node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const EVERYTHING = fromRoot('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const TASKMANAGER = fromRoot('node_modules/@kazuph/mcp-taskmanager/dist/index.js');
const PY_TOKEN = 'py-s3cret-token';

/** A list as FastMCP returns it from a tool annotated `-> list[dict]`: structuredContent {result} and one text block (indent 2) per element. */
const pythonSdkList = (elements: readonly Record<string, unknown>[]) => ({
  content: elements.map((element) => ({ type: 'text', text: JSON.stringify(element, null, 2) })),
  structuredContent: { result: elements },
  isError: false,
});

const CALENDAR = [
  {
    id: 'evt-1',
    summary: 'Design review',
    start: { dateTime: '2026-03-02T09:30:00+01:00' },
    htmlLink: 'https://calendar.example.com/event?eid=evt-1',
  },
  {
    id: 'evt-2',
    summary: 'Retro',
    start: { dateTime: '2026-03-02T16:00:00+01:00' },
    htmlLink: 'https://calendar.example.com/event?eid=evt-2',
  },
];

const memoryGraph = [
  { type: 'entity', name: 'Alice', entityType: 'person', observations: ['reviews the release'] },
  { type: 'entity', name: 'Pulse', entityType: 'project', observations: ['ships on Friday'] },
  { type: 'relation', from: 'Alice', to: 'Pulse', relationType: 'works on' },
];

const task = (id: string, title: string, done: boolean) => ({
  id,
  title,
  description: title,
  done,
  approved: false,
  completedDetails: done ? 'done' : '',
});

const taskFile = {
  requests: [
    {
      requestId: 'req-1',
      originalRequest: 'Ship the release',
      splitDetails: 'Ship the release',
      tasks: [task('task-1', 'Write notes', false), task('task-2', 'Tag', false)],
      completed: false,
    },
    {
      requestId: 'req-2',
      originalRequest: 'Fix the login bug',
      splitDetails: 'Fix the login bug',
      tasks: [task('task-3', 'Repro', true)],
      completed: false,
    },
  ],
};

/** Each real server, its tool, the shape it answers with, and the map a user would write. */
const SERVERS = [
  {
    server: 'memory',
    tested: '`@modelcontextprotocol/server-memory` 2026.8.31, `read_graph`',
    shape: 'structuredContent `{entities, relations}`, and the same as one text block',
    tool: 'read_graph',
    args: {},
    map: { items: 'entities', id: 'name', title: 'name', detail: 'observations' },
  },
  {
    server: 'everything',
    tested: '`@modelcontextprotocol/server-everything` 2026.8.31, `get-resource-links`',
    shape: 'a text block, then one `resource_link` block per resource',
    tool: 'get-resource-links',
    args: { count: 3 },
    map: { title: 'description' },
  },
  {
    server: 'tasks',
    tested: '`@kazuph/mcp-taskmanager` 1.1.1, `list_requests`',
    shape: 'one text block `{status, message, requests: [{requestId, originalRequest, …}]}`',
    tool: 'list_requests',
    args: {},
    map: { items: 'requests', id: 'requestId', title: 'originalRequest' },
    rules: [{ field: 'completedTasks', gte: 1, urgency: 0.95 }],
  },
  {
    server: 'python',
    tested: 'Python SDK (FastMCP) shape over HTTP with a bearer token, a tool `-> list[dict]`',
    shape: 'structuredContent `{result: […]}` and one text block per element',
    tool: 'list_events',
    args: {},
    map: { items: 'result', title: 'summary', starts_at: 'start.dateTime', url: 'htmlLink' },
  },
] as const;

describe('real third-party MCP servers as sources', { timeout: 90_000 }, () => {
  let project: string;
  let daemon: RunningDaemon;
  let client: Client;
  let python: Awaited<ReturnType<typeof fixtureFiles>>;
  const children: ChildProcess[] = [];
  /** What the agent was told, by source. */
  const told = new Map<string, ExternalEvent[]>();

  beforeAll(async () => {
    project = await tempProject('pulse-3p-sources-');
    await writeFile(
      join(project, 'memory.jsonl'),
      memoryGraph.map((line) => JSON.stringify(line)).join('\n'),
    );
    await writeFile(join(project, 'tasks.json'), JSON.stringify(taskFile, null, 2));
    python = await fixtureFiles(project, 'python', { mode: 'raw', result: pythonSdkList(CALENDAR) });
    const pythonUrl = await startHttpFixture(python.args, (child) => children.push(child));

    const stdio = (script: string, env: Record<string, string> = {}, args: string[] = []) => ({
      command: process.execPath,
      args: [script, ...args],
      env,
    });
    const servers = {
      memory: stdio(MEMORY, { MEMORY_FILE_PATH: join(project, 'memory.jsonl') }),
      everything: stdio(EVERYTHING, {}, ['stdio']),
      tasks: stdio(TASKMANAGER, { TASK_MANAGER_FILE_PATH: join(project, 'tasks.json') }),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: `${VAR}` is the config's own syntax.
      python: { url: pythonUrl, bearer_token: '${PY_TOKEN}' },
    };
    const sources = SERVERS.flatMap((entry) => {
      const base = {
        server: entry.server,
        tool: entry.tool,
        args: entry.args,
        interval_sec: 3600,
        urgency: 0.6,
      };
      return [
        { name: `${entry.server}-plain`, ...base },
        {
          name: `${entry.server}-mapped`,
          ...base,
          // A server of its own: two sources of one server listing the same items make one event each.
          server: `${entry.server}-mapped`,
          map: entry.map,
          rules: 'rules' in entry ? entry.rules : [],
        },
      ];
    });
    sources.push({
      name: 'memory-typo',
      server: 'memory',
      tool: 'read_graph',
      args: {},
      interval_sec: 3600,
      urgency: 0.6,
      map: { items: 'entities', title: 'nmae' },
    } as (typeof sources)[number]);
    await mkdir(join(project, '.pulse'), { recursive: true });
    await saveSources(
      project,
      JSON.stringify({
        mcpServers: Object.fromEntries(
          Object.entries(servers).flatMap(([name, server]) => [
            [name, server],
            [`${name}-mapped`, server],
          ]),
        ),
        sources,
      }),
    );
    daemon = await startDaemon(project, { env: { PY_TOKEN } });
    client = await connectClient(daemon.url);

    // Deliveries come one at a time: take each, note what the agent was told, acknowledge it.
    const expected = SERVERS.length * 2;
    await waitUntil(
      async () => {
        const answer = await callTool<CheckIn>(client, 'pulse_should_interrupt', {});
        if (answer.delivery_id !== null) {
          for (const event of answer.external_events)
            told.set(event.source, [...(told.get(event.source) ?? []), event]);
          await callTool<EventsAck>(client, 'pulse_ack_events', { delivery_id: answer.delivery_id });
        }
        return told.size === expected;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 200,
        describe: () => `events of ${expected} sources (got ${[...told.keys()].join(', ') || 'none'})`,
      },
    );
  }, 90_000);

  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    for (const child of children) child.kill('SIGKILL');
    await removeProject(project);
  });

  const read = (source: string): ExternalEvent[] => told.get(source) ?? [];

  it('reads server-memory’s entities without a map: id and title from the unique names', () => {
    expect(read('memory-plain').map((e) => [e.item_id, e.title])).toEqual([
      ['Alice', 'Alice'],
      ['Pulse', 'Pulse'],
    ]);
    expect(read('memory-mapped').map((e) => e.item_id)).toEqual(['Alice', 'Pulse']);
  });

  it('reads server-everything’s resource_link blocks: id and url the uri, the map picks another title', () => {
    expect(read('everything-plain').map((e) => [e.item_id, e.title, e.url])).toEqual([
      ['demo://resource/dynamic/blob/1', 'Blob Resource 1', 'demo://resource/dynamic/blob/1'],
      ['demo://resource/dynamic/text/2', 'Text Resource 2', 'demo://resource/dynamic/text/2'],
      ['demo://resource/dynamic/blob/3', 'Blob Resource 3', 'demo://resource/dynamic/blob/3'],
    ]);
    expect(read('everything-mapped').map((e) => e.title)).toEqual([
      'Resource 1: plaintext resource',
      'Resource 2: plaintext resource',
      'Resource 3: plaintext resource',
    ]);
  });

  it('reads taskmanager’s requests: untitled without a map, titled with one, and a field rule sets the urgency', async () => {
    expect(read('tasks-plain').map((e) => [e.item_id, e.title])).toEqual([
      ['req-1', '(untitled)'],
      ['req-2', '(untitled)'],
    ]);
    expect(read('tasks-mapped').map((e) => [e.item_id, e.title, e.urgency])).toEqual([
      ['req-1', 'Ship the release', 0.6],
      ['req-2', 'Fix the login bug', 0.95],
    ]);
    // The value the rule tests was kept in the inbox journal at poll time, and only for the source whose rules name it.
    const inserted = (
      await readJsonLines<{ op: string; event?: InboxEvent }>(join(project, '.pulse', 'inbox.jsonl'))
    )
      .flatMap((row) => (row.op === 'insert' && row.event?.source.startsWith('tasks-') ? [row.event] : []))
      .map((event) => [event.source, event.item_id, event.fields]);
    expect(inserted).toEqual(
      expect.arrayContaining([
        ['tasks-mapped', 'req-1', { completedTasks: 0 }],
        ['tasks-mapped', 'req-2', { completedTasks: 1 }],
        ['tasks-plain', 'req-1', undefined],
      ]),
    );
  });

  it('reads the Python SDK’s result wrapper, sent with the bearer token: start and link reach the agent', async () => {
    const expected = [
      ['evt-1', 'Design review', '2026-03-02T08:30:00.000Z', 'https://calendar.example.com/event?eid=evt-1'],
      ['evt-2', 'Retro', '2026-03-02T15:00:00.000Z', 'https://calendar.example.com/event?eid=evt-2'],
    ];
    for (const source of ['python-plain', 'python-mapped'])
      expect(read(source).map((e) => [e.item_id, e.title, e.starts_at, e.url])).toEqual(expected);
    const calls = await python.calls();
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((call) => call.headers?.authorization === `Bearer ${PY_TOKEN}`)).toBe(true);
  });

  it('fails a source whose map names a path no item has, naming the path and the keys found there', async () => {
    const status = (await (await fetch(new URL('/status', daemon.url))).json()) as SystemStatus;
    const typo = status.sources.pollers.find((poller) => poller.source === 'memory-typo');
    expect(typo?.last_error).toContain(
      'map.title "nmae" reads nothing as text in any item: in the first item, at the top there is an object with keys name, entityType, observations',
    );
    expect(read('memory-typo')).toEqual([]);
  });

  it('matches the table of docs/sources.md, row by row', async () => {
    const doc = await sourcesDoc();
    const rows = SERVERS.map((entry) =>
      tableRow([
        entry.tested,
        entry.shape,
        summarizeRead(read(`${entry.server}-plain`)),
        `${summarizeRead(read(`${entry.server}-mapped`))} with \`${JSON.stringify(entry.map)}\``,
      ]),
    );
    expect(rowsMissingFrom(doc, rows), 'rows docs/sources.md should have').toEqual([]);
  });
});
