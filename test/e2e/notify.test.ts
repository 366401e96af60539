import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { recordedDaemon } from '../support/daemon-record.js';
import { calendarSource } from '../support/source-fixture.js';
import { trackStarted } from '../support/started.js';

/*
 * `pulse start --notify` with a stand-in notify-send on PATH that records its arguments: what the
 * user is told on the desktop, once each, and a missing or failing notifier said once in the log
 * while the daemon goes on.
 */

const started = trackStarted();

afterAll(started.cleanUp);

/** A project with a stand-in `notify-send` (exiting with `exit`) in its own bin folder; the calls it got. */
const projectWithNotifier = async ({ exit = 0 } = {}) => {
  const project = await tempProject('pulse-notify-');
  started.projects.push(project);
  const bin = join(project, 'bin');
  await mkdir(bin);
  const calls = join(project, 'notify-send.calls');
  await writeFile(
    join(bin, 'notify-send'),
    `#!/bin/sh\nfor arg in "$@"; do printf '%s\\n' "$arg" >> '${calls}'; done\necho --- >> '${calls}'\n${exit === 0 ? '' : `echo 'cannot reach the session bus' >&2\nexit ${exit}\n`}`,
  );
  await chmod(join(bin, 'notify-send'), 0o755);
  const notified = async (): Promise<string[][]> => {
    const text = await readFile(calls, 'utf8').catch(() => '');
    return text
      .split('---\n')
      .filter(Boolean)
      .map((call) => call.split('\n').filter(Boolean));
  };
  return { project, path: `${bin}${delimiter}${process.env.PATH}`, notified };
};

const start = async (project: string, args: string[], env: Record<string, string>) => {
  const daemon = await startDaemon(project, { args, env });
  started.daemons.push(daemon);
  return daemon;
};

const agent = async ({ url }: { url: string }) => {
  const client = await connectClient(url);
  started.clients.push(client);
  await callTool(client, 'pulse_should_interrupt');
  return client;
};

const logLines = async (project: string) =>
  (await readFile(join(project, '.pulse', 'pulse.log'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number | string; msg: string; error?: string });

const guide = async (project: string, text: string) => {
  const run = await runCli(['guide', text, '-p', project]);
  expect(run.code).toBe(0);
  return /logged as (evt_\S+)\./.exec(run.stdout)![1]!;
};

describe('pulse start --notify', () => {
  it('tells the desktop once when an agent is held too long, and once when every agent has replanned', async () => {
    const { project, path, notified } = await projectWithNotifier();
    const daemon = await start(project, ['--notify-held-after', '1s'], { PATH: path });
    expect(daemon.output()).toContain(
      'Desktop notifications: on (notify-send or osascript): when every agent has replanned, an agent is held over 1s, external events need you',
    );
    const a = await agent(daemon);
    const b = await agent(daemon);
    const event = await guide(project, 'Smaller patch.');

    // Both owe it for a second: each is news, once.
    await waitUntil(async () => (await notified()).length >= 2, {
      timeoutMs: 10_000,
      describe: () => 'two notifications',
    });
    const held = await notified();
    expect(held.map((call) => call.slice(0, 3))).toEqual([
      ['--app-name=pulse', '--', expect.stringMatching(/^pulse · pulse-notify-\S+: an agent is still held$/)],
      ['--app-name=pulse', '--', expect.stringMatching(/^pulse · pulse-notify-\S+: an agent is still held$/)],
    ]);
    // Still held a while longer (the clock looks every 500 ms here): not said again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await notified()).toHaveLength(2);
    expect(held[0]![3]).toMatch(
      /^pulse-test 1\.0\.0 \(session [0-9a-f]{8}…\) has not acknowledged the change to guidance\.md for \ds: it is held until it replans\.$/,
    );

    await callTool(a, 'pulse_ack_replan', { event_id: event });
    await callTool(b, 'pulse_ack_replan', { event_id: event });
    await waitUntil(async () => (await notified()).length === 3, {
      describe: () => 'the all-acknowledged notification',
    });
    expect((await notified())[2]!.slice(2)).toEqual([
      expect.stringMatching(/^pulse · pulse-notify-\S+: every agent replanned$/),
      '2 agents acknowledged the change to guidance.md; 2 without changing the plan.',
    ]);
    // Nothing is said twice, however long the daemon runs on.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await notified()).toHaveLength(3);
  });

  it('tells the desktop when external events need the user, titles as arguments, never through a shell', async () => {
    const { project, path, notified } = await projectWithNotifier();
    const title = 'Prod is down; $(touch pwned) `id`';
    await calendarSource(project, [title]);
    await start(project, ['--notify'], { PATH: path });
    await waitUntil(async () => (await notified()).length === 1, {
      timeoutMs: 15_000,
      describe: () => 'a delivery notification',
    });
    expect((await notified())[0]!.slice(2)).toEqual([
      expect.stringMatching(/: Prod is down; \$\(touch pwned\) `id`$/),
      `1 external event needs you: ${title} (cal)`,
    ]);
    await expect(readFile(join(project, 'pwned'))).rejects.toThrow();
  });

  it('says once in the log that no notifier is on PATH, and goes on serving', async () => {
    const project = await tempProject('pulse-notify-none-');
    started.projects.push(project);
    const daemon = await start(project, ['--notify', '--notify-held-after', '1s'], {
      PATH: join(project, 'nothing-here'),
    });
    const a = await agent(daemon);
    for (const text of ['First.', 'Second.']) {
      const event = await guide(project, text);
      expect(
        (await callTool<{ accepted: boolean }>(a, 'pulse_ack_replan', { event_id: event })).accepted,
      ).toBe(true);
    }
    await waitUntil(async () =>
      (await logLines(project)).some((line) => /--notify shows nothing/.test(line.msg)),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const said = (await logLines(project)).filter((line) => /notifier|notification/.test(line.msg));
    expect(said.map((line) => line.msg)).toEqual([
      'no desktop notifier: notify-send is not on PATH (install libnotify-bin, or your desktop’s notify-send): --notify shows nothing',
    ]);
    expect((await fetch(new URL('healthz', daemon.url))).status).toBe(200);
  });

  it('says once in the log that the notifier fails, keeps trying, and never holds an answer', async () => {
    const { project, path, notified } = await projectWithNotifier({ exit: 1 });
    const daemon = await start(project, ['--notify'], { PATH: path });
    const a = await agent(daemon);
    for (const text of ['First.', 'Second.']) {
      const event = await guide(project, text);
      expect(
        (await callTool<{ accepted: boolean }>(a, 'pulse_ack_replan', { event_id: event })).accepted,
      ).toBe(true);
    }
    await waitUntil(async () => (await notified()).length === 2, { describe: () => 'two tries' });
    const said = (await logLines(project)).filter((line) => /notification/.test(line.msg));
    expect(said).toEqual([
      expect.objectContaining({
        msg: 'a desktop notification could not be shown; pulse keeps trying',
        error: expect.stringMatching(/notify-send failed: cannot reach the session bus$/),
      }),
    ]);
  });

  it('tells the desktop for a project added with --notify to a daemon started without, and for it alone', async () => {
    const { project: quiet, path, notified } = await projectWithNotifier();
    const daemon = await start(quiet, [], { PATH: path });
    const joined = await tempProject('pulse-notify-joined-');
    started.projects.push(joined);
    const added = await runCli([
      'start',
      '-p',
      joined,
      '--port',
      String(daemon.port),
      '--notify',
      '--notify-held-after',
      '1s',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`Added ${joined} to the pulse already running on port ${daemon.port}`);
    expect(added.stdout).toContain('Desktop notifications: on (notify-send or osascript)');
    const { url } = recordedDaemon(joined);
    const notifyState = async (mcpUrl: string) =>
      (
        (await (await fetch(new URL('status', mcpUrl))).json()) as { actors: { id: string; state: string }[] }
      ).actors.find((actor) => actor.id === 'notify')?.state;
    expect(await notifyState(daemon.url)).toBe('off');
    expect(await notifyState(url)).toBe('idle');

    // An agent in each project is held by a change; the quiet one's first.
    const q = await agent(daemon);
    const quietEvent = await guide(quiet, 'Quiet here.');
    const j = await agent({ url });
    const joinedEvent = await guide(joined, 'Smaller patch.');
    await waitUntil(async () => (await notified()).length >= 1, {
      timeoutMs: 10_000,
      describe: () => 'the joined project’s held notification',
    });
    await callTool(j, 'pulse_ack_replan', { event_id: joinedEvent });
    await waitUntil(async () => (await notified()).length >= 2, {
      describe: () => 'its all-acknowledged one',
    });
    const name = joined.split('/').at(-1)!;
    expect((await notified()).map((call) => call[2])).toEqual([
      `pulse · ${name}: an agent is still held`,
      `pulse · ${name}: the agent replanned`,
    ]);
    await callTool(q, 'pulse_ack_replan', { event_id: quietEvent });
  });

  it('is off without --notify: notify-send is never run', async () => {
    const { project, path, notified } = await projectWithNotifier();
    const daemon = await start(project, [], { PATH: path });
    const a = await agent(daemon);
    const event = await guide(project, 'Quiet please.');
    await callTool(a, 'pulse_ack_replan', { event_id: event });
    const status = (await (await fetch(new URL('status', daemon.url))).json()) as {
      actors: { id: string; state: string }[];
    };
    expect(status.actors.find((actor) => actor.id === 'notify')).toMatchObject({ state: 'off' });
    expect(await notified()).toEqual([]);
  });
});
