import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from 'xstate';
import { MAX_SOURCE_TEST_MS } from '../../src/sources/source-test.js';
import { sourcesOf } from '../../src/system/ask-actors.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';
import { type InProcessApp, inProcessApp } from './in-process-app.js';

/*
 * `POST /sources/test` in process, on a real actor system whose source is the fixture MCP server
 * (a real child process): what it answers for a source the daemon does not know, while tests run
 * at capacity, and for a test that never ends. The CLI over a spawned daemon: test/e2e/sources-env.test.ts.
 */

const served: InProcessApp[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const app of served.splice(0)) await app.stop();
});

const start = async (prepare?: (project: string) => Promise<void>) => {
  const app = await inProcessApp({}, prepare);
  served.push(app);
  return app;
};

const test = (app: InProcessApp, body: string) =>
  app.request('/sources/test', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const answer = async (response: Response) => ({
  status: response.status,
  ...((await response.json()) as object),
});

/** A source `cal` whose server answers initialize and then never answers a call, within an hour's timeout. */
const hangingSource = async (project: string) => {
  const cal = await fixtureFiles(project, 'cal', { mode: 'hang' });
  await saveSources(
    project,
    JSON.stringify({
      mcpServers: { cal: { ...fixtureCommand(cal.args), timeout_sec: 3600 } },
      sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 3600 }],
    }),
  );
};

describe('the sources-test route, in process', () => {
  it('answers 403 with the command that trusts it while sources.json is not trusted, and starts no server', async () => {
    let records: () => Promise<unknown[]> = async () => [];
    const app = await start(async (project) => {
      const cal = await fixtureFiles(project, 'cal', { items: [] });
      records = cal.records;
      await mkdir(join(project, '.pulse'), { recursive: true });
      await writeFile(
        join(project, '.pulse', 'sources.json'),
        JSON.stringify({
          mcpServers: { cal: fixtureCommand(cal.args) },
          sources: [{ name: 'cal', server: 'cal', tool: 'list_events', interval_sec: 3600 }],
        }),
      );
    });
    await waitFor(sourcesOf(app.actor), (s) => s.matches('untrusted'));
    expect(await answer(await test(app, '{"source": "cal"}'))).toEqual({
      status: 403,
      error: expect.stringMatching(/^\.pulse\/sources\.json is not trusted, .* To trust it: .*trust -p /),
    });
    expect(await records(), 'the server was never started').toEqual([]);
  });

  it('answers 404 naming the sources it knows for a source it does not know, 400 for a body that names none', async () => {
    const app = await start();
    expect(await answer(await test(app, '{"source": "nope"}'))).toEqual({
      status: 404,
      error: expect.stringMatching(/^No source "nope"/),
    });
    expect(await answer(await test(app, '{"name": 1}'))).toEqual({
      status: 400,
      error: expect.stringContaining('{"source": "<name in sources.json>"'),
    });
  });

  it('answers 429 while four tests run, and 504 for each test that has not ended by the limit', async () => {
    const app = await start(hangingSource);
    const sources = sourcesOf(app.actor);
    await waitFor(sources, (s) => s.context.sources.some((source) => source.name === 'cal'));
    // From here on the route's deadline (and the server's timeout) run on the test's clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const running = Array.from({ length: 4 }, () => test(app, '{"source": "cal"}'));
    await waitFor(sources, (s) => s.context.testing.length === 4);
    expect(await answer(await test(app, '{"source": "cal"}'))).toEqual({
      status: 429,
      error: '4 source tests are running already; try again once one has ended.',
    });
    await vi.advanceTimersByTimeAsync(MAX_SOURCE_TEST_MS);
    for (const response of await Promise.all(running)) {
      expect(await answer(response)).toEqual({
        status: 504,
        error: `The test of source "cal" did not end within ${MAX_SOURCE_TEST_MS / 1000} s.`,
      });
    }
  });
});
