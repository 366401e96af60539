import { realpathSync } from 'node:fs';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import type { FocusContext } from '../../machines/focus-context.js';
import type { GateContext } from '../../machines/gate-context.js';
import type { FocusResult } from '../../src/commands/focus.js';
import { writeDaemonRecord } from '../../src/store/daemon-record.js';
import { writeFocus } from '../../src/store/focus-file.js';
import { pulsePaths } from '../../src/store/paths.js';
import { ensurePulseFolder } from '../../src/store/pulse-folder.js';
import { actorOf } from '../../src/system/actors.js';
import type { SystemStatus } from '../../src/system/system-status.js';
import { createPulseSystem, type PulseSystem } from '../../src/system/wiring.js';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  removeProject,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { daemonRecord } from '../support/daemon-record.js';
import { fixtureCommand, fixtureFiles } from '../support/source-fixture.js';
import { saveSources } from '../support/trust.js';

const projects: string[] = [];
const daemons: RunningDaemon[] = [];
const systems: PulseSystem[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await Promise.all(systems.splice(0).map((system) => system.stop()));
  await Promise.all(daemons.splice(0).map((daemon) => daemon.kill9()));
  await Promise.all(projects.splice(0).map(removeProject));
});

/** A temp project, with `.pulse/` unless asked not to. */
const project = async ({ pulse = true } = {}) => {
  const dir = await tempProject('pulse-focus-');
  projects.push(dir);
  if (pulse) await mkdir(join(dir, '.pulse'));
  return dir;
};

const start = async (dir: string) => {
  const daemon = await startDaemon(dir);
  daemons.push(daemon);
  return daemon;
};

const focusFile = (dir: string) => join(dir, '.pulse', 'focus.json');

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const untilInFile = async (dir: string): Promise<string> =>
  JSON.parse(await readFile(focusFile(dir), 'utf8')).until;

/** `pulse focus ARGS --json -p DIR`, which must succeed; its parsed result and when it ran. */
const focusJson = async (dir: string, ...args: string[]) => {
  const before = Date.now();
  const { code, stdout, stderr } = await runCli(['focus', ...args, '--json', '-p', dir]);
  const after = Date.now();
  expect(code, stderr).toBe(0);
  return { result: JSON.parse(stdout) as FocusResult, before, after, stderr };
};

const status = async (daemon: RunningDaemon): Promise<SystemStatus> => {
  const response = await fetch(new URL('/status', daemon.url));
  expect(response.status).toBe(200);
  return (await response.json()) as SystemStatus;
};

const MINUTE = 60_000;

describe('pulse focus: the duration', () => {
  it.each([
    ['45m', 45 * MINUTE],
    ['1h30m', 90 * MINUTE],
    ['90s', 90_000],
    ['2h', 120 * MINUTE],
    ['30', 30 * MINUTE],
  ])('%s sets the focus that far from now, in focus.json', async (arg, ms) => {
    const dir = await project();
    const { result, before, after } = await focusJson(dir, arg);
    const until = Date.parse(result.until!);
    expect(until).toBeGreaterThanOrEqual(before + ms);
    expect(until).toBeLessThanOrEqual(after + ms);
    expect(result).toMatchObject({ action: 'set', file: focusFile(dir) });
    expect(await untilInFile(dir)).toBe(result.until);
  });

  it('off removes the focus file', async () => {
    const dir = await project();
    await focusJson(dir, '45m');
    const { code, stdout } = await runCli(['focus', 'off', '-p', dir]);
    expect(code).toBe(0);
    expect(stdout).toContain('Focus off');
    expect(await exists(focusFile(dir))).toBe(false);
  });

  it('off with no focus says there is none to end, instead of a removal', async () => {
    const dir = await project();
    const { code, stdout } = await runCli(['focus', 'off', '-p', dir]);
    expect(code).toBe(0);
    expect(stdout).toContain('No focus to end');
    expect(stdout).not.toContain('Focus off');
    expect((await focusJson(dir, 'off')).result).toMatchObject({ action: 'off', removed: false });
  });

  it.each(['abc', '45x', '0', '0m', '1.5h', '169h', '10081m', '8d', '7d1s', 'h', 'd'])(
    'refuses %s with exit 1, naming the forms it accepts, and writes nothing',
    async (arg) => {
      const dir = await project();
      const { code, stderr } = await runCli(['focus', arg, '-p', dir]);
      expect(code).toBe(1);
      expect(stderr).toContain(`"${arg}"`);
      expect(stderr).toContain('45m, 90s, 2h, 1h30m or 7d (a bare number is minutes), at most 7 days');
      expect(stderr).toContain('`off`');
      expect(await exists(focusFile(dir))).toBe(false);
    },
  );

  it('accepts exactly 7 days, as help says (7d, 168h), and no more', async () => {
    const dir = await project();
    expect((await runCli(['focus', '168h', '-p', dir])).code).toBe(0);
    expect((await runCli(['focus', '168h1s', '-p', dir])).code).toBe(1);
    const { result, before, after } = await focusJson(dir, '7d');
    expect(Date.parse(result.until!)).toBeGreaterThanOrEqual(before + 7 * 24 * 60 * MINUTE);
    expect(Date.parse(result.until!)).toBeLessThanOrEqual(after + 7 * 24 * 60 * MINUTE);
    expect((await focusJson(dir, '1d12h')).result.action).toBe('set');
  });
});

describe('pulse focus without a daemon', () => {
  it('says the focus applies when the daemon starts, with the end in local time and ISO', async () => {
    const dir = await project();
    const { code, stdout } = await runCli(['focus', '45m', '-p', dir]);
    expect(code).toBe(0);
    const until = await untilInFile(dir);
    const end = new Date(until);
    const local = `${String(end.getHours()).padStart(2, '0')}:${String(end.getMinutes()).padStart(2, '0')}`;
    expect(stdout).toContain(`Focus until `);
    expect(stdout).toContain(local);
    expect(stdout).toContain(`(${until})`);
    expect(stdout).toContain('No daemon is running; the focus applies when it starts.');
  });

  it('shows the current focus when given no duration, and none after off', async () => {
    const dir = await project();
    const { result: set } = await focusJson(dir, '2h');
    const { result: shown } = await focusJson(dir);
    expect(shown).toMatchObject({ action: 'show', until: set.until, daemon: { running: false } });
    await focusJson(dir, 'off');
    const { code, stdout } = await runCli(['focus', '-p', dir]);
    expect(code).toBe(0);
    expect(stdout).toContain('No focus');
  });

  it('pulse status shows the focus from the file, and a broken file as an error', async () => {
    const dir = await project();
    await focusJson(dir, '45m');
    const until = await untilInFile(dir);
    const shown = await runCli(['status', '-p', dir]);
    expect(shown.stdout).toMatch(new RegExp(`focus: +quiet until .*\\(${until.replace(/\./g, '\\.')}\\)`));
    expect(shown.stdout).toContain('pulse focus off ends it');

    await writeFile(focusFile(dir), 'not json');
    const broken = await runCli(['status', '--json', '-p', dir]);
    const report = JSON.parse(broken.stdout) as { focus: SystemStatus['focus'] };
    expect(report.focus.until).toBeNull();
    expect(report.focus.last_error).toContain('is not valid JSON');
  });

  it('refuses a project without .pulse/, suggesting pulse init or pulse start', async () => {
    const dir = await project({ pulse: false });
    const { code, stderr } = await runCli(['focus', '45m', '-p', dir]);
    expect(code).toBe(1);
    expect(stderr).toContain(join(dir, '.pulse'));
    expect(stderr).toContain('pulse init');
    expect(stderr).toContain('pulse start');
    expect(await exists(join(dir, '.pulse'))).toBe(false);
  });

  it('shows a broken focus file as an error saying how to fix it', async () => {
    const dir = await project();
    await writeFile(focusFile(dir), '{"until": "soon"}');
    const { code, stderr } = await runCli(['focus', '-p', dir]);
    expect(code).toBe(1);
    expect(stderr).toContain(focusFile(dir));
    expect(stderr).toContain('pulse focus off');
  });
});

describe('pulse focus with a running daemon', () => {
  it('waits until the daemon holds the focus, shows it in /status, and off ends it', async () => {
    const dir = await project();
    const daemon = await start(dir);
    expect((await status(daemon)).focus).toEqual({ until: null, last_error: null });

    const { code, stdout } = await runCli(['focus', '45m', '-p', dir]);
    expect(code).toBe(0);
    const until = await untilInFile(dir);
    expect(stdout).toContain(`The daemon holds external events until `);
    expect(stdout).toContain(`(${until})`);
    expect((await status(daemon)).focus).toEqual({ until, last_error: null });

    const { result } = await focusJson(dir, 'off');
    expect(result.daemon).toMatchObject({ running: true, url: daemon.url, until: null });
    expect(result.daemon.picked_up).toBe(true);
    expect((await status(daemon)).focus).toEqual({ until: null, last_error: null });
  });

  it('keeps the focus across a daemon restart', async () => {
    const dir = await project();
    let daemon = await start(dir);
    const { result } = await focusJson(dir, '2h');
    expect(result.daemon.picked_up).toBe(true);
    expect(await daemon.stop()).toBe(0);

    daemon = await start(dir);
    await waitUntil(async () => (await status(daemon)).focus.until === result.until, {
      describe: () => `/status focus.until to be ${result.until} after the restart`,
    });
  });

  it('reports a broken focus.json in /status, keeps the last good focus, and keeps answering', async () => {
    const dir = await project();
    const daemon = await start(dir);
    const { result } = await focusJson(dir, '45m');
    await writeFile(focusFile(dir), '{"until": ');

    const focus = await waitUntil(
      async () => {
        const current = (await status(daemon)).focus;
        return current.last_error !== null && current;
      },
      { describe: () => '/status focus.last_error' },
    );
    expect(focus.last_error).toContain(focusFile(dir));
    expect(focus.last_error).toContain('is not valid JSON');
    expect(focus.until).toBe(result.until);
    const health = await fetch(new URL('/healthz', daemon.url));
    expect(health.status).toBe(200);
    expect(((await health.json()) as { ok: boolean }).ok).toBe(true);

    const shown = await runCli(['status', '-p', dir]);
    expect(shown.stdout).toContain('ERROR');
    expect(shown.stdout).toContain('is not valid JSON');

    // Setting the focus again repairs it.
    const { result: again } = await focusJson(dir, '1h');
    expect(again.daemon.picked_up).toBe(true);
    expect((await status(daemon)).focus).toEqual({ until: again.until, last_error: null });
  });

  it('warns, saying what to check, when the daemon it finds does not pick the focus up', async () => {
    const other = await project();
    const daemon = await start(other);
    // A record of ours that names a daemon serving another project: it never sees this focus.
    const dir = await project();
    writeDaemonRecord({ ...daemonRecord(other)!, project: realpathSync(dir) });
    const { code, stdout, stderr } = await runCli(['focus', '45m', '-p', dir]);
    expect(code).toBe(0);
    expect(await untilInFile(dir)).toMatch(/^\d{4}-/);
    expect(stdout).not.toContain('The daemon holds external events');
    expect(stderr).toContain(`warning: The daemon at ${daemon.url} did not pick up the focus within 3 s`);
    expect(stderr).toContain(`Check that it serves ${dir}`);
    expect((await status(daemon)).focus.until).toBeNull();
  });
});

describe('external events under focus', () => {
  interface Answer {
    needs_attention: boolean;
    external_events: Array<{ item_id: string }>;
    delivery_id: string | null;
  }

  it('are held in the inbox while in focus, and delivered at the first check-in after pulse focus off', async () => {
    const dir = await project();
    await focusJson(dir, '45m');
    const cal = await fixtureFiles(dir, 'cal', {
      items: [1, 2, 3].map((i) => ({ id: `cal-${i}`, title: `cal item ${i}` })),
    });
    await saveSources(
      dir,
      JSON.stringify({
        mcpServers: { cal: fixtureCommand(cal.args) },
        sources: [{ name: 'cal', server: 'cal', tool: 'list_events', args: {}, interval_sec: 300 }],
      }),
    );
    const daemon = await start(dir);
    const client = await connectClient(daemon.url);
    clients.push(client);
    const check = () => callTool<Answer>(client, 'pulse_should_interrupt', {});

    await waitUntil(async () => (await status(daemon)).inbox.size === 3, {
      timeoutMs: 15_000,
      describe: () => 'the 3 items in the inbox',
    });
    for (let i = 0; i < 3; i++) {
      expect(await check()).toMatchObject({ needs_attention: false, external_events: [], delivery_id: null });
    }
    expect((await status(daemon)).inbox.size).toBe(3);

    const { result } = await focusJson(dir, 'off');
    expect(result.daemon.picked_up).toBe(true);
    const answer = await check();
    expect(answer.needs_attention).toBe(true);
    expect(answer.delivery_id).not.toBeNull();
    expect(answer.external_events.map((e) => e.item_id).sort()).toEqual(['cal-1', 'cal-2', 'cal-3']);
  }, 60_000);
});

describe('the focus in the actor system', () => {
  it('tells the gate at start and on every edit; the gate holds reflections while in focus', async () => {
    const dir = await project();
    const paths = pulsePaths(dir);
    await ensurePulseFolder(paths);
    const until = Date.now() + 45 * MINUTE;
    await writeFocus(paths.dir, until);
    const system = await createPulseSystem(paths, { log: () => {}, env: {} });
    systems.push(system);
    system.actor.start();
    const gate = actorOf(system.actor, 'gate');
    const focus = actorOf(system.actor, 'focus');

    await waitFor(focus, (s) => s.matches('ready'), { timeout: 5000 });
    expect(focus.getSnapshot().context.until).toBe(until);
    expect(gate.getSnapshot().context.focusUntil).toBe(until);

    const heldBefore = gate.getSnapshot().context.gated.focus;
    gate.send({ type: 'gate.reflect', reason: 'checkin' });
    const held = gate.getSnapshot();
    expect(held.value).toBe('idle');
    expect(held.context.gated.focus).toBe(heldBefore + 1);
    expect(held.context.lastGate).toBe('focus');

    // The watcher carries the edit to the focus actor, which tells the gate.
    await waitFor(actorOf(system.actor, 'watcher'), (s) => s.matches('watching'), {
      timeout: 5000,
    });
    await writeFocus(paths.dir, null);
    await waitFor(gate, (s) => (s.context as GateContext).focusUntil === null, { timeout: 5000 });
    expect((focus.getSnapshot().context as FocusContext).until).toBeNull();
  });
});
