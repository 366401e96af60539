import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClientPool, type ClientPoolOptions } from '../../src/sources/client/client-pool.js';
import { SourceCallError } from '../../src/sources/client/source-call-error.js';
import type { HttpServerConfig, ServerConfig, StdioServerConfig } from '../../src/sources/config/config.js';
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

interface ToolResult {
  content: { type: string; text: string }[];
  structuredContent?: { items: unknown[] };
  isError?: boolean;
}

let dir: string;
const pools: ClientPool[] = [];
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pulse-pool-'));
});

afterEach(async () => {
  await Promise.allSettled(pools.splice(0).map((pool) => pool.close()));
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

const createPool = (servers: Record<string, ServerConfig>, options?: ClientPoolOptions) => {
  const pool = new ClientPool(servers, options);
  pools.push(pool);
  return pool;
};

const stdioServer = (
  name: string,
  args: string[],
  extra: Partial<StdioServerConfig> = {},
): StdioServerConfig => ({
  kind: 'stdio',
  name,
  ...fixtureCommand(args),
  env: {},
  cwd: undefined,
  timeoutMs: 10_000,
  ...extra,
});

/** Spawns the fixture over HTTP and resolves with the URL it prints. */
const httpFixture = (args: string[]) => startHttpFixture(args, (child) => children.push(child));

const callItems = async (pool: ClientPool, server: string, args: Record<string, unknown> = {}) => {
  const result = (await pool.callTool(server, 'list_items', args)) as ToolResult;
  return result.structuredContent?.items;
};

const failureOf = async (call: Promise<unknown>): Promise<SourceCallError> => {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SourceCallError);
  return error as SourceCallError;
};

const pidsOf = (records: RecordLine[]) => [...new Set(records.map((line) => line.pid))];

/** The process group of a `--grandchild` fixture, checked to hold the grandchild and not to be ours. */
const groupOfServer = async (files: FixtureFiles): Promise<number> => {
  const { group, grandchildGroup } = await fixtureFamily(files);
  expect(grandchildGroup, "the grandchild is in the server's group").toBe(group);
  expect(group, 'a group of its own, out of reach of our terminal').not.toBe(groupOf(process.pid));
  return group!;
};

describe('ClientPool', () => {
  it('returns the raw tool result of a stdio server, as structured content and JSON text', async () => {
    const files = await fixtureFiles(dir, 'cal', { items: [{ id: 'a' }, { id: 'b' }] });
    const pool = createPool({ cal: stdioServer('cal', files.args) });

    const result = (await pool.callTool('cal', 'list_events', { days: 2 })) as ToolResult;

    expect(result.structuredContent).toEqual({ items: [{ id: 'a' }, { id: 'b' }] });
    expect(JSON.parse(result.content[0]!.text)).toEqual({ items: [{ id: 'a' }, { id: 'b' }] });
    expect((await files.records()).find((line) => line.kind === 'call')).toMatchObject({
      tool: 'list_events',
      args: { days: 2 },
    });
  });

  it('returns an isError result as it came, without failing the call or dropping the client', async () => {
    const files = await fixtureFiles(dir, 'cal', { mode: 'isError' });
    const pool = createPool({ cal: stdioServer('cal', files.args) });

    const result = (await pool.callTool('cal', 'list_items', {})) as ToolResult;
    await pool.callTool('cal', 'list_items', {});

    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain('fixture failure');
    expect(pidsOf(await files.records())).toHaveLength(1);
  });

  it('passes the configured env to a stdio server, and not the rest of our environment', async () => {
    vi.stubEnv('FIXTURE_ECHO_ENV', 'leaked from the daemon');
    const withEnv = await fixtureFiles(dir, 'with-env');
    const withoutEnv = await fixtureFiles(dir, 'without-env');
    const pool = createPool({
      withEnv: stdioServer('withEnv', withEnv.args, { env: { FIXTURE_ECHO_ENV: 'configured' } }),
      withoutEnv: stdioServer('withoutEnv', withoutEnv.args),
    });

    await pool.callTool('withEnv', 'list_items', {});
    await pool.callTool('withoutEnv', 'list_items', {});

    expect((await withEnv.records()).at(-1)?.env).toBe('configured');
    expect((await withoutEnv.records()).at(-1)?.env).toBeNull();
  });

  it('returns items from a streamable HTTP server and sends it the configured headers, Authorization included', async () => {
    const files = await fixtureFiles(dir, 'mail', { items: [{ id: 1 }, { id: 2 }, { id: 3 }], window: 2 });
    const url = await httpFixture(files.args);
    const mail: HttpServerConfig = {
      kind: 'http',
      name: 'mail',
      url,
      headers: { Authorization: 'Bearer s3cret', 'X-Tenant': 'acme' },
      timeoutMs: 10_000,
    };
    const pool = createPool({ mail });

    expect(await callItems(pool, 'mail', { unread: true })).toEqual([{ id: 2 }, { id: 3 }]);

    const call = (await files.records()).find((line) => line.kind === 'call');
    expect(call?.args).toEqual({ unread: true });
    expect(call?.headers).toMatchObject({ authorization: 'Bearer s3cret', 'x-tenant': 'acme' });
  });

  it('shares one connect between concurrent first calls', async () => {
    const files = await fixtureFiles(dir, 'cal', { items: [{ id: 'a' }] });
    const pool = createPool({ cal: stdioServer('cal', files.args) });

    const results = await Promise.all([1, 2, 3].map(() => callItems(pool, 'cal')));

    expect(results).toEqual([[{ id: 'a' }], [{ id: 'a' }], [{ id: 'a' }]]);
    const records = await files.records();
    expect(records.filter((line) => line.kind === 'initialize')).toHaveLength(1);
    expect(records.filter((line) => line.kind === 'call')).toHaveLength(3);
  });

  it('times out a hanging server within its timeout, while another server in the pool keeps answering', async () => {
    const slowFiles = await fixtureFiles(dir, 'slow', { items: [{ id: 'late' }] });
    const fastFiles = await fixtureFiles(dir, 'fast', { items: [{ id: 'quick' }] });
    const [slowUrl, fastUrl] = await Promise.all([httpFixture(slowFiles.args), httpFixture(fastFiles.args)]);
    const pool = createPool({
      slow: { kind: 'http', name: 'slow', url: slowUrl, headers: {}, timeoutMs: 1_500 },
      fast: { kind: 'http', name: 'fast', url: fastUrl, headers: {}, timeoutMs: 10_000 },
    });
    await Promise.all([callItems(pool, 'slow'), callItems(pool, 'fast')]);
    await slowFiles.setControl({ mode: 'hang' });

    const started = Date.now();
    let hungSettled = false;
    const hung = failureOf(pool.callTool('slow', 'list_items', {})).finally(() => {
      hungSettled = true;
    });
    expect(await callItems(pool, 'fast')).toEqual([{ id: 'quick' }]);
    expect(hungSettled).toBe(false);

    const error = await hung;
    expect(error).toMatchObject({ name: 'SourceCallError', server: 'slow', reason: 'timeout' });
    expect(error.message).toBe(
      'server "slow" did not answer "list_items" within 1.5 s (timeout_sec); it is skipped until it recovers',
    );
    // Ours, not the SDK's default of 60 s.
    expect(Date.now() - started).toBeLessThan(15_000);

    await slowFiles.setControl({ items: [{ id: 'back' }] });
    expect(await callItems(pool, 'slow')).toEqual([{ id: 'back' }]);
  });

  it('kills a stdio server that hangs on a call, and starts it afresh on the next call', async () => {
    const files = await fixtureFiles(dir, 'cal', { items: [{ id: 'first' }] });
    // Generous: the limit also bounds the spawn and connect, which a loaded machine can make slow.
    const pool = createPool({
      cal: stdioServer('cal', [...files.args, '--grandchild'], { timeoutMs: 6_000 }),
    });
    await callItems(pool, 'cal');
    const hungGroup = await groupOfServer(files);
    await files.setControl({ mode: 'hang' });

    expect(await failureOf(pool.callTool('cal', 'list_items', {}))).toMatchObject({ reason: 'timeout' });
    await vi.waitFor(() => expect(groupMembers(hungGroup)).toEqual([]), { timeout: 10_000 });

    await files.setControl({ items: [{ id: 'again' }] });
    expect(await callItems(pool, 'cal')).toEqual([{ id: 'again' }]);
    expect(pidsOf(await files.records())).toHaveLength(2);
  });

  it('ends what a crashed server left running in its process group', async () => {
    const files = await fixtureFiles(dir, 'cal', { items: [{ id: 'first' }] });
    const pool = createPool({ cal: stdioServer('cal', [...files.args, '--grandchild']) });
    await callItems(pool, 'cal');
    const group = await groupOfServer(files);
    await files.setControl({ mode: 'crash' });

    expect(await failureOf(pool.callTool('cal', 'list_items', {}))).toMatchObject({ reason: 'closed' });

    // The grandchild ignores SIGTERM: only the SIGKILL that follows ends it.
    await vi.waitFor(() => expect(groupMembers(group)).toEqual([]), { timeout: 10_000 });
  });

  it('times out a stdio server that never finishes connecting, and kills its child', async () => {
    const pidFile = join(dir, 'mute.pid');
    // Never reads stdin nor answers, and outlives its stdin: only a signal ends it.
    const pool = createPool({
      mute: stdioServer('mute', [], {
        command: 'sh',
        args: ['-c', 'echo $$ > "$1"; exec sleep 600', 'sh', pidFile],
        timeoutMs: 1_000,
      }),
    });

    const error = await failureOf(pool.callTool('mute', 'list_items', {}));

    expect(error).toMatchObject({ server: 'mute', reason: 'timeout' });
    expect(error.message).toContain('server "mute" did not connect within 1 s (timeout_sec)');
    const pid = Number(await readFile(pidFile, 'utf8'));
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000 });
  });

  it('fails a call to a server that crashes, then reconnects on the next call', async () => {
    const files = await fixtureFiles(dir, 'cal', { mode: 'crash' });
    const pool = createPool({ cal: stdioServer('cal', files.args) });

    const error = await failureOf(pool.callTool('cal', 'list_items', {}));
    expect(error).toMatchObject({ server: 'cal', reason: 'closed' });
    expect(error.message).toContain('it is reconnected on the next call');

    await files.setControl({ items: [{ id: 'after' }] });
    expect(await callItems(pool, 'cal')).toEqual([{ id: 'after' }]);
    expect(pidsOf(await files.records())).toHaveLength(2);
  });

  it('fails a stdio answer over the SDK read buffer limit, then reconnects', async () => {
    const files = await fixtureFiles(dir, 'cal', { mode: 'huge' });
    const pool = createPool({ cal: stdioServer('cal', files.args, { timeoutMs: 25_000 }) });

    const error = await failureOf(pool.callTool('cal', 'list_items', {}));
    expect(error).toMatchObject({ reason: 'closed' });

    await files.setControl({ items: [{ id: 'small' }] });
    expect(await callItems(pool, 'cal')).toEqual([{ id: 'small' }]);
  });

  it('reports a clear connect error for a server that exits at once', async () => {
    const pool = createPool({ gone: stdioServer('gone', ['--exit-at-once']) });

    const error = await failureOf(pool.callTool('gone', 'list_items', {}));

    expect(error).toMatchObject({ server: 'gone', reason: 'connect' });
    expect(error.message).toMatch(
      /^server "gone" failed to connect \(stdio: .*node.*\): it closed the connection/,
    );
    expect(error.message).toContain('its last stderr line: fixture: exiting at once, as asked');
    expect(error.message).toContain('check its command, args, env and cwd');
  });

  it('reports a connect error naming the URL of an HTTP server that is down', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const pool = createPool({
      down: {
        kind: 'http',
        name: 'down',
        url: `http://127.0.0.1:${port}/mcp`,
        headers: {},
        timeoutMs: 5_000,
      },
    });

    const error = await failureOf(pool.callTool('down', 'list_items', {}));

    expect(error).toMatchObject({ server: 'down', reason: 'connect' });
    expect(error.message).toContain(`http://127.0.0.1:${port}/mcp`);
    expect(error.message).toContain('check its url and headers');
  });

  it('names the known servers when asked for an unknown one', async () => {
    const pool = createPool({
      cal: stdioServer('cal', []),
      mail: { kind: 'http', name: 'mail', url: 'http://127.0.0.1:1/mcp', headers: {}, timeoutMs: 1_000 },
    });

    const error = await failureOf(pool.callTool('calendar', 'list_items', {}));

    expect(error).toMatchObject({ server: 'calendar', reason: 'call' });
    expect(error.message).toBe('no server "calendar" is configured; known servers: cal, mail');
  });

  it('keeps answering while a server floods stderr, and forwards its lines cut to 2,000 characters', async () => {
    const files = await fixtureFiles(dir, 'noisy', { items: [{ id: 'n' }] });
    let lines = 0;
    let longest = 0;
    const servers = new Set<string>();
    let flooded: () => void;
    const floodSeen = new Promise<void>((resolve) => {
      flooded = resolve;
    });
    const pool = createPool(
      { noisy: stdioServer('noisy', [...files.args, '--stderr-flood']) },
      {
        onStderr: (server, line) => {
          servers.add(server);
          lines += 1;
          longest = Math.max(longest, line.length);
          if (lines >= 5_000) flooded();
        },
      },
    );

    expect(await callItems(pool, 'noisy')).toEqual([{ id: 'n' }]);
    // Far more than a pipe buffer holds: had we stopped reading, the child would be blocked by now.
    await floodSeen;
    expect(await callItems(pool, 'noisy')).toEqual([{ id: 'n' }]);

    expect(longest).toBe(2_001);
    expect([...servers]).toEqual(['noisy']);
  });

  it('ends the whole process group of each stdio server on close, through a shell wrapper too', async () => {
    const direct = await fixtureFiles(dir, 'direct');
    const wrapped = await fixtureFiles(dir, 'wrapped');
    const pool = createPool({
      direct: stdioServer('direct', [...direct.args, '--grandchild']),
      wrapped: stdioServer('wrapped', [], fixtureBehindShell([...wrapped.args, '--grandchild'])),
    });
    await Promise.all(['direct', 'wrapped'].map((name) => pool.callTool(name, 'list_items', {})));
    const groups = [await groupOfServer(direct), await groupOfServer(wrapped)];
    expect(groups.map((group) => groupMembers(group).length)).toEqual([2, 3]);

    await pool.close();

    // SIGKILL is final but not instant: the grandchild, which ignored SIGTERM, may take a moment.
    await vi.waitFor(() => expect(groups.flatMap(groupMembers)).toEqual([]), { timeout: 5_000 });
  });

  it('leaves no child process alive after close, and refuses calls afterwards', async () => {
    const plain = await fixtureFiles(dir, 'plain');
    const stubborn = await fixtureFiles(dir, 'stubborn');
    const web = await fixtureFiles(dir, 'web');
    const url = await httpFixture(web.args);
    const pool = createPool({
      plain: stdioServer('plain', plain.args),
      // Its flood timer keeps it running after stdin closes, so it must be signalled.
      stubborn: stdioServer('stubborn', [...stubborn.args, '--stderr-flood']),
      web: { kind: 'http', name: 'web', url, headers: {}, timeoutMs: 10_000 },
    });
    await Promise.all(['plain', 'stubborn', 'web'].map((name) => pool.callTool(name, 'list_items', {})));
    const pids = [...pidsOf(await plain.records()), ...pidsOf(await stubborn.records())];
    expect(pids).toHaveLength(2);

    await pool.close();

    expect(pids.filter(isAlive)).toEqual([]);
    expect(await failureOf(pool.callTool('plain', 'list_items', {}))).toMatchObject({ reason: 'closed' });
  });

  it('keeps unchanged clients on update, and restarts changed and removed ones', async () => {
    const keptFiles = await fixtureFiles(dir, 'kept', { items: [{ id: 'k' }] });
    const changedFiles = await fixtureFiles(dir, 'changed', { items: [{ id: 'c' }] });
    const removedFiles = await fixtureFiles(dir, 'removed', { items: [{ id: 'r' }] });
    const kept = stdioServer('kept', [...keptFiles.args, '--grandchild']);
    const changed = stdioServer('changed', [...changedFiles.args, '--grandchild'], {
      env: { FIXTURE_ECHO_ENV: 'v1' },
    });
    const removed = stdioServer('removed', [...removedFiles.args, '--grandchild']);
    const pool = createPool({ kept, changed, removed });
    await Promise.all(['kept', 'changed', 'removed'].map((name) => pool.callTool(name, 'list_items', {})));
    const [keptGroup, changedGroup, removedGroup] = [
      await groupOfServer(keptFiles),
      await groupOfServer(changedFiles),
      await groupOfServer(removedFiles),
    ];

    await pool.update({
      kept: structuredClone(kept),
      changed: { ...changed, env: { FIXTURE_ECHO_ENV: 'v2' } },
    });

    await vi.waitFor(() => {
      expect(groupMembers(changedGroup), 'the changed server and its grandchild').toEqual([]);
      expect(groupMembers(removedGroup), 'the removed server and its grandchild').toEqual([]);
    }, 5_000);
    expect(groupMembers(keptGroup)).toHaveLength(2);
    await Promise.all(['kept', 'changed'].map((name) => pool.callTool(name, 'list_items', {})));
    const initializes = async (files: typeof keptFiles) =>
      (await files.records()).filter((line) => line.kind === 'initialize');
    expect(await initializes(keptFiles)).toHaveLength(1);
    expect((await initializes(changedFiles)).map((line) => line.env)).toEqual(['v1', 'v2']);
    expect(await failureOf(pool.callTool('removed', 'list_items', {}))).toMatchObject({ reason: 'call' });
  });
});
