import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClientPool } from '../../src/sources/client/client-pool.js';
import { MODERN_HTTP_REQUESTS } from '../../src/sources/client/server-connection.js';
import type { HttpServerConfig, StdioServerConfig } from '../../src/sources/config/config.js';
import { readJsonLines } from '../support/files.js';
import { fixtureFiles, type RecordLine, startHttpFixture } from '../support/source-fixture.js';

// Which protocol revision pulse polls a source on: HTTP sources probe and speak 2026-07-28 where
// the server serves it, and fall back to 2025-11-25 on an old server; stdio sources always open
// with `initialize` on their one child (docs/sources.md, "Protocol revisions").

/** The v2 SDK fixture: createMcpHandler over HTTP, serveStdio over stdio. */
const V2_FIXTURE = fileURLToPath(new URL('../fixtures/source-server-v2.mjs', import.meta.url));

type V2Record = { kind: 'call'; revision: string; pid: number } | { kind: 'discover'; pid: number };

let dir: string;
const pools: ClientPool[] = [];
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pulse-eras-'));
});

afterEach(async () => {
  await Promise.allSettled(pools.splice(0).map((pool) => pool.close()));
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await rm(dir, { recursive: true, force: true });
});

const poolOf = (config: HttpServerConfig | StdioServerConfig) => {
  const pool = new ClientPool({ src: config });
  pools.push(pool);
  return pool;
};

const httpSource = (url: string): HttpServerConfig => ({
  kind: 'http',
  name: 'src',
  url,
  headers: {},
  timeoutMs: 10_000,
});

/** Spawns the v2 fixture over HTTP and resolves with the URL it prints. */
const startV2Http = (args: string[]) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [V2_FIXTURE, '--http', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout.on('data', (data) => {
      output += data;
      const match = /LISTENING (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr.on('data', (data) => {
      output += data;
    });
    child.on('exit', (code) => reject(new Error(`the v2 HTTP fixture exited with ${code}:\n${output}`)));
  });

/** Lists and calls `list_items` as a poll does, and returns the title the server gave its one item. */
const poll = async (pool: ClientPool) => {
  const listed = await pool.listedTool('src', 'list_items');
  expect(listed.listed, `list_items among ${listed.names.join(', ')}`).toBe(true);
  const result = (await pool.callTool('src', 'list_items', {})) as {
    structuredContent: { items: { title: string }[] };
  };
  return result.structuredContent.items[0]?.title;
};

describe('the protocol revision a source is polled on', () => {
  it('polls a v2 HTTP server on 2026-07-28, even one that refuses 2025 clients', async () => {
    const record = join(dir, 'v2-http.jsonl');
    const pool = poolOf(httpSource(await startV2Http(['--legacy-reject', '--record', record])));

    expect(await poll(pool)).toBe('served on 2026-07-28');
    expect(await poll(pool)).toBe('served on 2026-07-28');

    const calls = await readJsonLines<V2Record>(record);
    expect(calls.map((line) => ('revision' in line ? line.revision : line.kind))).toEqual([
      'discover',
      '2026-07-28',
      '2026-07-28',
    ]);
  });

  it('polls an old (v1 SDK) HTTP server on 2025-11-25 after its probe is refused', async () => {
    const files = await fixtureFiles(dir, 'old', { items: [{ id: 'old-1' }] });
    const pool = poolOf(httpSource(await startHttpFixture(files.args, (child) => children.push(child))));

    const result = (await pool.callTool('src', 'list_items', {})) as {
      structuredContent: { items: unknown[] };
    };

    expect(result.structuredContent.items).toEqual([{ id: 'old-1' }]);
    const kinds = (await files.records()).map((line: RecordLine) => line.kind);
    expect(kinds, 'the legacy handshake ran').toContain('initialize');
  });

  it('polls a v2 stdio server on 2025-11-25 through initialize, spawning its command once', async () => {
    const record = join(dir, 'v2-stdio.jsonl');
    const pool = poolOf({
      kind: 'stdio',
      name: 'src',
      command: process.execPath,
      args: [V2_FIXTURE, '--record', record],
      env: {},
      cwd: undefined,
      timeoutMs: 10_000,
    });

    expect(await poll(pool)).toBe('served on legacy');
    expect(await poll(pool)).toBe('served on legacy');

    const calls = await readJsonLines<V2Record>(record);
    expect(calls.map((line) => ('revision' in line ? line.revision : line.kind))).toEqual([
      'legacy',
      'legacy',
    ]);
    expect(new Set(calls.map((line) => line.pid)).size, 'one child served every call').toBe(1);
  });

  // Node keeps a little of every 2026-07-28 request on a connection's transport for as long as the
  // connection lives (src/sources/client/server-connection.ts, MODERN_HTTP_REQUESTS): the pool
  // replaces it after that many, without failing a call that is still waiting on the old one.
  it('replaces a 2026-07-28 HTTP connection after MODERN_HTTP_REQUESTS, failing no call in flight', async () => {
    const record = join(dir, 'v2-worn.jsonl');
    const pool = poolOf(httpSource(await startV2Http(['--legacy-reject', '--record', record])));
    const call = () => pool.callTool('src', 'list_items', {});

    // Two callers at once, as two sources on one server: one is waiting when the other wears it out.
    const rounds = Math.ceil(MODERN_HTTP_REQUESTS / 2) + 20;
    for (let round = 0; round < rounds; round++) await Promise.all([call(), call()]);

    const lines = await readJsonLines<V2Record>(record);
    const calls = lines.filter((line) => line.kind === 'call');
    expect(calls).toHaveLength(rounds * 2);
    expect(new Set(calls.map((line) => line.revision))).toEqual(new Set(['2026-07-28']));
    expect(
      lines.filter((line) => line.kind === 'discover'),
      'connected twice',
    ).toHaveLength(2);
    const firstDiscoverAfter = lines.findLastIndex((line) => line.kind === 'discover');
    expect(firstDiscoverAfter - 1, 'calls the first connection served').toBeGreaterThanOrEqual(
      MODERN_HTTP_REQUESTS,
    );
  });

  it('ends a worn 2026-07-28 connection still waiting for an answer when the pool closes', async () => {
    const pool = poolOf(httpSource(await startV2Http(['--legacy-reject'])));
    for (let i = 0; i < MODERN_HTTP_REQUESTS - 2; i++) await pool.callTool('src', 'list_items', {});
    const waiting = pool.callTool('src', 'hang', {});
    const failed = waiting.then(
      () => 'answered',
      (error: Error) => error.message,
    );
    // The last request the connection serves: it wears out while the hanging call still waits on it.
    await pool.callTool('src', 'list_items', {});

    await pool.close();

    expect(await failed).toMatch(/server "src" lost the connection during "hang"/);
  });

  it('keeps a 2025-11-25 HTTP session past MODERN_HTTP_REQUESTS: one initialize', async () => {
    const files = await fixtureFiles(dir, 'old', { items: [{ id: 'old-1' }] });
    const pool = poolOf(httpSource(await startHttpFixture(files.args, (child) => children.push(child))));

    for (let i = 0; i < MODERN_HTTP_REQUESTS + 10; i++) await pool.callTool('src', 'list_items', {});

    const kinds = (await files.records()).map((line: RecordLine) => line.kind);
    expect(kinds.filter((kind) => kind === 'initialize')).toHaveLength(1);
  });
});
