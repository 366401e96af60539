import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Client, type LoggingLevel, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpApp } from '../../src/http/app.js';
import { watchContext } from '../../src/mcp/context-push.js';
import { CONTEXT_URI } from '../../src/mcp/context-resource.js';
import { type PulsePaths, pulsePaths } from '../../src/store/paths.js';
import { ensurePulseFolder } from '../../src/store/pulse-folder.js';
import { actorOf } from '../../src/system/actors.js';
import { ackReplan, gateOf, inboxOf, logOf, reconcile, replanOf } from '../../src/system/ask-actors.js';
import { createPulseSystem, type PulseSystem } from '../../src/system/wiring.js';
import { oneShot, tempProject, waitUntil } from '../support/daemon.js';
import { save } from '../support/files.js';
import { unheardReplies } from '../support/replan-answer.js';

/*
 * The push against a real actor system in this process (real files, real inotify), so the
 * observers on the actors can be counted: a session's watch adds one to each of the four actors
 * the context is rendered from, and every way a session ends takes it away again.
 */

let project: string;
let paths: PulsePaths;
let system: PulseSystem;

beforeEach(async () => {
  project = await tempProject('pulse-push-unit-');
  paths = pulsePaths(project);
  await ensurePulseFolder(paths);
  system = await createPulseSystem(paths, { log: () => {} });
  system.actor.start();
  // The first scan logs the templates just created; the tests start once it has.
  await reconcile(system.actor);
});

afterEach(async () => {
  await system.stop();
  // A scan the watcher started just before the stop may still be writing its files.
  await rm(project, { recursive: true, force: true, maxRetries: 5 });
});

/** How many observers each actor behind the context has (xstate keeps them in `observers`). */
const observerCounts = () =>
  [logOf, replanOf, gateOf, inboxOf].map(
    (refOf) => (refOf(system.actor) as unknown as { observers: Set<unknown> }).observers.size,
  );

/** The watcher's context: how many changes it has reported to the log. */
const watcherOf = () => actorOf(system.actor, 'watcher').getSnapshot().context;

/** Lets the watch's next-turn check run. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const recorder = () => {
  const updates: string[] = [];
  const logs: Array<{ level: LoggingLevel; data: string }> = [];
  return {
    updates,
    logs,
    channel: {
      resourceUpdated: (uri: string) => updates.push(uri),
      log: (level: LoggingLevel, data: string) => logs.push({ level, data }),
    },
  };
};

describe('watchContext', () => {
  it('sends one update per change of the context, none when a scan changed nothing, and a warning once per pending event', async () => {
    const { updates, logs, channel } = recorder();
    const watch = watchContext(system.actor, channel);
    watch.subscribe();

    await reconcile(system.actor);
    await nextTurn();
    expect(updates).toEqual([]);

    const hintsBefore = watcherOf().changesSeen;
    await save(paths.file('guidance.md'), '# Guidance\n\nUse the new API.\n');
    await reconcile(system.actor);
    await nextTurn();
    const pending = replanOf(system.actor).getSnapshot().context.pendingEventId!;
    expect(updates).toEqual([CONTEXT_URI]);
    expect(logs).toHaveLength(1);
    expect(logs[0]!.level).toBe('warning');
    expect(logs[0]!.data).toContain(`event ${pending}`);
    expect(logs[0]!.data).toContain('.pulse/guidance.md');
    expect(logs[0]!.data).toContain(`pulse_ack_replan with event_id "${pending}"`);

    // The watcher's own scans of that save come later and find nothing new.
    await waitUntil(() => {
      const { scansRequested, scansCompleted } = logOf(system.actor).getSnapshot().context;
      return watcherOf().changesSeen > hintsBefore && scansCompleted >= scansRequested;
    });
    await nextTurn();
    expect(updates).toHaveLength(1);

    await ackReplan(system.actor, pending);
    await nextTurn();
    expect(updates).toHaveLength(2);
    expect(logs).toHaveLength(1);

    watch.unsubscribe();
    await save(paths.file('constraints.md'), '# Constraints\n\nNo new dependencies.\n');
    await reconcile(system.actor);
    await nextTurn();
    expect(updates).toHaveLength(2);
    expect(logs).toHaveLength(2);
    watch.stop();
  });

  it('coalesces the changes of one tick into one update', async () => {
    await save(paths.file('guidance.md'), '# Guidance\n\nFirst.\n');
    await reconcile(system.actor);
    const replan = replanOf(system.actor);
    const pending = replan.getSnapshot().context.pendingEventId!;
    const { updates, logs, channel } = recorder();
    const watch = watchContext(system.actor, channel);
    watch.subscribe();
    // An accepted ack, then a new guidance event: two different contexts within one tick.
    replan.send({
      type: 'replan.ack',
      requestId: 1_000_000,
      replyTo: unheardReplies,
      eventId: pending,
      target: { id: pending, path: '.pulse/guidance.md' },
      planSha256: null,
      at: new Date().toISOString(),
    });
    replan.send({
      type: 'log.appended',
      events: [
        {
          id: 'evt_99991231T000000000000Z_00000000',
          timestamp: new Date().toISOString(),
          kind: 'modified',
          path: '.pulse/guidance.md',
          sha256: null,
          size: null,
        },
      ],
    });
    await nextTurn();
    expect(updates).toEqual([CONTEXT_URI]);
    expect(logs.map((l) => l.data)).toEqual([expect.stringContaining('evt_99991231T000000000000Z_00000000')]);
    watch.stop();
  });

  it('does not announce a replan that was already pending when the watch began', async () => {
    await save(paths.file('guidance.md'), '# Guidance\n\nBefore the session.\n');
    await reconcile(system.actor);
    const { logs, channel } = recorder();
    const watch = watchContext(system.actor, channel);
    await reconcile(system.actor);
    await nextTurn();
    expect(logs).toEqual([]);
    watch.stop();
  });

  it('drops its four actor subscriptions on stop, and sends nothing afterwards', async () => {
    const before = observerCounts();
    const { updates, logs, channel } = recorder();
    const watch = watchContext(system.actor, channel);
    watch.subscribe();
    expect(observerCounts()).toEqual(before.map((n) => n + 1));
    watch.stop();
    expect(observerCounts()).toEqual(before);
    await save(paths.file('guidance.md'), '# Guidance\n\nAfter the stop.\n');
    await reconcile(system.actor);
    await nextTurn();
    expect({ updates, logs }).toEqual({ updates: [], logs: [] });
  });
});

describe('sessions over HTTP', () => {
  const served: Array<ReturnType<typeof serve>> = [];
  afterEach(async () => {
    await Promise.all(served.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  const serveApp = async () => {
    const { app, closeSessions } = createHttpApp({ actor: system.actor, projectRoot: project });
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    served.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, closeSessions };
  };

  const connect = async (url: string) => {
    const client = new Client({ name: 'push-unit', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    return { client, transport };
  };

  const countsBecome = (expected: number[]) =>
    waitUntil(() => JSON.stringify(observerCounts()) === JSON.stringify(expected), {
      describe: () => `observers ${JSON.stringify(observerCounts())} to become ${JSON.stringify(expected)}`,
    });

  it('a session watches from initialized until DELETE; one-shot requests watch nothing', async () => {
    const { url } = await serveApp();
    const before = observerCounts();

    expect((await oneShot(url, 'tools/list')).status).toBe(200);
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const refused = await oneShot(url, 'resources/subscribe', { uri: CONTEXT_URI });
    expect(refused.body.error?.message).toContain('Subscriptions need a session');
    expect(observerCounts()).toEqual(before);

    const { client, transport } = await connect(url);
    await countsBecome(before.map((n) => n + 1));
    await client.subscribeResource({ uri: CONTEXT_URI });
    await transport.terminateSession();
    await countsBecome(before);
    await client.close();
  });

  it('drops every session watch when the daemon closes its sessions at shutdown', async () => {
    const { url, closeSessions } = await serveApp();
    const before = observerCounts();
    const sessions = [await connect(url), await connect(url)];
    await countsBecome(before.map((n) => n + 2));
    await sessions[0]!.client.subscribeResource({ uri: CONTEXT_URI });
    await closeSessions();
    await countsBecome(before);
    await Promise.all(sessions.map(({ client }) => client.close()));
  });
});
