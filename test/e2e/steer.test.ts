import { chmod, lstat, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { pulseRunning } from '../support/cli-running.js';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  readEvents,
  runCli,
  startDaemon,
  tempProject,
  waitUntil,
} from '../support/daemon.js';
import { recordedDaemon } from '../support/daemon-record.js';
import { trackStarted } from '../support/started.js';

/*
 * `pulse guide` and `pulse constrain` through the built CLI, as a user runs them beside a spawned
 * daemon and agents connected over MCP with the SDK: the write, who must replan, and with --wait
 * each agent's ack and plan diff as it comes, the exit codes of every ending.
 */

const started = trackStarted();

afterAll(started.cleanUp);

const newProject = async () => {
  const project = await tempProject('pulse-steer-');
  started.projects.push(project);
  return project;
};

const served = async (project = '') => {
  const root = project || (await newProject());
  const daemon = await startDaemon(root);
  started.daemons.push(daemon);
  return { project: root, daemon };
};

const agent = async (daemon: RunningDaemon) => {
  const client = await connectClient(daemon.url);
  started.clients.push(client);
  // A check-in makes it an agent working in the project.
  await callTool(client, 'pulse_should_interrupt');
  return client;
};

const sessionOf = (client: Client) => (client.transport as StreamableHTTPClientTransport).sessionId!;

/** How pulse names a test client: its clientInfo, then its session. */
const labelOf = (client: Client) => `pulse-test 1.0.0 (session ${sessionOf(client).slice(0, 8)}…)`;
const labelPattern = (client: Client) => labelOf(client).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ANY_LABEL = 'pulse-test 1\\.0\\.0 \\(session [0-9a-f]{8}…\\)';

interface Decision {
  needs_replan: boolean;
  pending_replan_event_id: string | null;
}

interface AckAnswer {
  accepted: boolean;
  plan_changed?: boolean;
  plan_change?: string;
}

const plan = (project: string) => join(project, '.pulse', 'plan.md');
const guidance = (project: string) => join(project, '.pulse', 'guidance.md');

describe('pulse guide --wait with two agents', () => {
  it('prints each agent’s ack as it comes, with its plan diff or that the plan did not change, and exits 0', async () => {
    const { project, daemon } = await served();
    await writeFile(plan(project), '# Plan\n\n1. Rewrite the parser\n2. Ship it\n');
    const a = await agent(daemon);
    const b = await agent(daemon);

    const guide = pulseRunning(started, [
      'guide',
      'Keep the patch small: touch only the parser.',
      '-p',
      project,
      '--wait',
      '--timeout',
      '1m',
    ]);
    await guide.printed(/Waiting up to 1m/);
    expect(guide.output()).toMatch(
      /^Wrote \.pulse\/guidance\.md \(replaced, 45 bytes\) in .*: logged as (evt_\S+)\.$/m,
    );
    const event = /logged as (evt_\S+)\./.exec(guide.output())![1]!;
    expect(guide.output()).toContain(
      `2 agents must now replan and acknowledge ${event}; each is held at its next tool call until it has.`,
    );
    expect(guide.output()).toContain(`owes it: ${labelOf(a)}`);
    expect(guide.output()).toContain(`owes it: ${labelOf(b)}`);
    expect(await readFile(guidance(project), 'utf8')).toBe('Keep the patch small: touch only the parser.\n');

    // B acknowledges without touching the plan: accepted, and said plainly.
    const forB = await callTool<Decision>(b, 'pulse_should_interrupt');
    expect(forB).toMatchObject({ needs_replan: true, pending_replan_event_id: event });
    const bAck = await callTool<AckAnswer>(b, 'pulse_ack_replan', { event_id: event });
    expect(bAck).toMatchObject({
      accepted: true,
      plan_changed: false,
      plan_change: 'acknowledged without changing the plan',
    });
    await guide.printed(new RegExp(`${labelPattern(b)} acknowledged ${event} .*without changing the plan`));
    expect(guide.child.exitCode).toBeNull();

    // A replans: its ack carries the diff of plan.md since the change.
    await writeFile(
      plan(project),
      '# Plan\n\n1. Patch the parser only\n2. Ship it\n3. Tell the user what changed\n',
    );
    const aAck = await callTool<AckAnswer>(a, 'pulse_ack_replan', { event_id: event });
    expect(aAck).toMatchObject({
      accepted: true,
      plan_changed: true,
      plan_change: 'the plan changed: 2 lines added, 1 removed',
    });

    expect(await guide.exited).toBe(0);
    const lines = guide.output().split('\n');
    const aLine = lines.findIndex((line) => line.startsWith(`${labelOf(a)} acknowledged ${event}`));
    expect(lines[aLine]).toMatch(/: the plan changed: 2 lines added, 1 removed$/);
    expect(lines.slice(aLine + 1, aLine + 9)).toEqual([
      '    --- plan.md at the change',
      '    +++ plan.md at the ack',
      '    @@ -1,4 +1,5 @@',
      '     # Plan',
      '     ',
      '    -1. Rewrite the parser',
      '    +1. Patch the parser only',
      '     2. Ship it',
    ]);
    expect(lines.at(-2)).toBe(`Every agent has acknowledged ${event}.`);
    if (process.env.PULSE_STEER_TRANSCRIPT) console.log(`$ pulse guide "…" --wait\n${guide.output()}exit 0`);

    // pulse status and /status say the same, and the log has a line for each.
    const status = await runCli(['status', '-p', project]);
    expect(status.stdout).toMatch(
      new RegExp(`acked: +${labelPattern(a)} acknowledged ${event} \\d+s ago: the plan changed`),
    );
    expect(status.stdout).toMatch(
      new RegExp(
        `acked: +${labelPattern(b)} acknowledged ${event} \\d+s ago: acknowledged without changing the plan`,
      ),
    );
    const log = (await readFile(join(project, '.pulse', 'pulse.log'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(log.filter((line) => line.event_id === event).map((line) => line.msg)).toEqual(
      expect.arrayContaining([
        'replan acknowledged without changing the plan',
        'replan acknowledged: the plan changed: 2 lines added, 1 removed',
      ]),
    );
  });

  it('exits 3 on timeout naming the agent that has not acknowledged, and the change stands', async () => {
    const { project, daemon } = await served();
    const a = await agent(daemon);
    const b = await agent(daemon);
    const guide = pulseRunning(started, [
      'guide',
      'Stop after the parser.',
      '-p',
      project,
      '--wait',
      '--timeout',
      '3s',
    ]);
    await guide.printed(/Waiting up to 3s/);
    const event = /logged as (evt_\S+)\./.exec(guide.output())![1]!;
    await callTool(a, 'pulse_ack_replan', { event_id: event });
    await guide.printed(new RegExp(`${labelPattern(a)} acknowledged`));
    expect(await guide.exited).toBe(3);
    expect(guide.output()).toContain(`Timed out after 3s: still owing ${event}: ${labelOf(b)}`);
    if (process.env.PULSE_STEER_TRANSCRIPT)
      console.log(`$ pulse guide "…" --wait --timeout 3s\n${guide.output()}exit 3`);
    // B is still held for it.
    expect(await callTool<Decision>(b, 'pulse_should_interrupt')).toMatchObject({
      needs_replan: true,
      pending_replan_event_id: event,
    });
  });

  it('reports an agent that leaves as gone, waits no longer for it, and a newcomer as owing too', async () => {
    const { project, daemon } = await served();
    const a = await agent(daemon);
    const leaving = await agent(daemon);
    const leavingSession = sessionOf(leaving);
    const guide = pulseRunning(started, [
      'constrain',
      'No network calls.',
      '-p',
      project,
      '--wait',
      '--timeout',
      '1m',
    ]);
    await guide.printed(/Waiting up to/);
    const event = /logged as (evt_\S+)\./.exec(guide.output())![1]!;
    await (leaving.transport as StreamableHTTPClientTransport).terminateSession();
    await guide.printed(
      new RegExp(
        `pulse-test 1\\.0\\.0 \\(session ${leavingSession.slice(0, 8)}…\\) left \\(its session closed, or it went quiet\\): not waited for`,
      ),
    );
    const late = await agent(daemon);
    await guide.printed(new RegExp(`${labelPattern(late)} came to work and owes it too`));
    await callTool(a, 'pulse_ack_replan', { event_id: event });
    await callTool(late, 'pulse_ack_replan', { event_id: event });
    expect(await guide.exited).toBe(0);
    expect(await readFile(join(project, '.pulse', 'constraints.md'), 'utf8')).toBe('No network calls.\n');
  });

  it('stops waiting on Ctrl-C with exit 130, the change written and still owed', async () => {
    const { project, daemon } = await served();
    const a = await agent(daemon);
    const guide = pulseRunning(started, ['guide', 'Pause the refactor.', '-p', project, '--wait']);
    await guide.printed(/Waiting up to 10m/);
    guide.child.kill('SIGINT');
    expect(await guide.exited).toBe(130);
    expect(guide.output()).toMatch(
      /Stopped waiting \(the change stands\): still owing evt_\S+: pulse-test 1\.0\.0 \(session/,
    );
    expect(await callTool<Decision>(a, 'pulse_should_interrupt')).toMatchObject({ needs_replan: true });
  });
});

describe('pulse guide and pulse constrain: the write', () => {
  it('has nothing to wait for when no agent is working, and says so rather than that all acknowledged', async () => {
    const { project } = await served();
    const alone = await runCli(['guide', 'Nobody is here.', '-p', project, '--wait']);
    expect(alone.code).toBe(0);
    expect(alone.stdout).toContain('No agent is working in the project now: the next one to come owes');
    expect(alone.stdout).toContain(
      'Nothing to wait for: no agent is working now (the next one to come must replan first).',
    );
    expect(alone.stdout).not.toContain('Every agent has acknowledged');
  });

  it('adds a paragraph with --append, reads - from stdin, and says when the file already says it', async () => {
    const { project } = await served();
    expect((await runCli(['guide', 'First point.', '-p', project])).code).toBe(0);
    expect((await runCli(['guide', 'Second point.', '--append', '-p', project])).code).toBe(0);
    expect(await readFile(guidance(project), 'utf8')).toBe('First point.\n\nSecond point.\n');
    const piped = await runCli(['constrain', '-', '-p', project], { input: 'Read only.\nNo deploys.\n' });
    expect(piped.code).toBe(0);
    expect(await readFile(join(project, '.pulse', 'constraints.md'), 'utf8')).toBe(
      'Read only.\nNo deploys.\n',
    );
    const again = await runCli(['constrain', 'Read only.\nNo deploys.', '-p', project]);
    expect(again.stdout).toContain(
      '.pulse/constraints.md already says that: nothing changed, and no agent owes anything new.',
    );
    // One event per change written, none for the one that changed nothing.
    expect((await readEvents(project)).map((e) => e.path)).toEqual([
      '.pulse/guidance.md',
      '.pulse/guidance.md',
      '.pulse/constraints.md',
    ]);
  });

  it('--edit opens $EDITOR on a copy and writes only what was saved; an unchanged copy writes nothing', async () => {
    const { project } = await served();
    await writeFile(guidance(project), '# Guidance\n\nOld advice.\n');
    const guidanceEvents = async () =>
      (await readEvents(project)).filter((e) => e.path === '.pulse/guidance.md');
    await waitUntil(async () => (await guidanceEvents()).length === 1);
    const editor = join(project, 'editor.sh');
    await writeFile(editor, '#!/bin/sh\nsed -i "s/Old advice./New advice./" "$1"\n');
    await chmod(editor, 0o755);
    const edited = await runCli(['guide', '--edit', '-p', project], { env: { EDITOR: editor, VISUAL: '' } });
    expect(edited.code).toBe(0);
    expect(await readFile(guidance(project), 'utf8')).toBe('# Guidance\n\nNew advice.\n');
    const untouched = await runCli(['guide', '--edit', '-p', project], {
      env: { EDITOR: 'true', VISUAL: '' },
    });
    expect(untouched.stdout).toBe('The editor left .pulse/guidance.md as it was: nothing written.\n');
    const failing = await runCli(['guide', '--edit', '-p', project], {
      env: { EDITOR: 'false', VISUAL: '' },
    });
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(/The editor \(false\) exited with 1; nothing was written/);
    // The user's own save, then the edit: neither the untouched nor the failed editor wrote anything.
    expect(await guidanceEvents()).toHaveLength(2);
  });

  it('refuses a symlinked guidance.md, an empty text and one over 64 KiB with the fix, writing nothing', async () => {
    const { project } = await served();
    const outside = join(project, 'elsewhere.md');
    await writeFile(outside, 'mine\n');
    await rm(guidance(project));
    await symlink(outside, guidance(project));
    const refused = await runCli(['guide', 'Something', '-p', project]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      '.pulse/guidance.md is a symlink, and pulse never writes through symlinks',
    );
    expect(await readFile(outside, 'utf8')).toBe('mine\n');
    expect((await lstat(guidance(project))).isSymbolicLink()).toBe(true);
    const empty = await runCli(['constrain', '  ', '-p', project]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('Nothing to write to .pulse/constraints.md: the text is empty.');
    const none = await runCli(['guide', '-p', project]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/Say what the agents should know: `pulse guide "…"`/);
    // Past the daemon's request limit too, the refusal is the file's own limit, not HTTP's words.
    const events = (await readEvents(project)).length;
    for (const bytes of [70_000, 300_000]) {
      const huge = await runCli(['constrain', '-', '-p', project], { input: 'x'.repeat(bytes) });
      expect(huge.code).toBe(1);
      expect(huge.stderr).toBe(
        `pulse: .pulse/constraints.md would be ${bytes + 1} bytes, over the 64 KiB agents read whole: say it shorter.\n`,
      );
    }
    expect((await readEvents(project)).length).toBe(events);
  });

  it('writes the file itself when no daemon runs, says no agent is told until pulse runs, and --wait exits 2', async () => {
    const project = await newProject();
    await mkdir(join(project, '.pulse'));
    const written = await runCli(['guide', 'Smaller steps.', '-p', project]);
    expect(written.code).toBe(0);
    expect(written.stdout).toContain(
      `No pulse daemon serves ${project}: wrote .pulse/guidance.md here; no agent is told until pulse runs for it`,
    );
    expect(await readFile(guidance(project), 'utf8')).toBe('Smaller steps.\n');
    const waiting = await runCli(['guide', 'Even smaller.', '-p', project, '--wait']);
    expect(waiting.code).toBe(2);
    expect(waiting.stdout).toContain('Nothing to wait for: no daemon runs, so no agent can acknowledge yet.');
    // The daemon, once it runs, holds the first agent for that change.
    const { daemon } = await served(project);
    const client = await connectClient(daemon.url);
    started.clients.push(client);
    expect(await callTool<Decision>(client, 'pulse_should_interrupt')).toMatchObject({ needs_replan: true });
  });

  it('--all steers every project the daemon serves, each with its own event', async () => {
    const { project: first, daemon } = await served();
    const second = await newProject();
    const joined = await runCli(['start', '-p', second, '--port', String(daemon.port)]);
    expect(joined.code).toBe(0);
    const all = await runCli(['guide', 'Freeze the API.', '--all', '--port', String(daemon.port)]);
    expect(all.code).toBe(0);
    for (const project of [first, second]) {
      expect(await readFile(guidance(project), 'utf8')).toBe('Freeze the API.\n');
      expect(all.stdout).toContain(`in ${project}: logged as evt_`);
    }
    expect(all.stdout).toMatch(/^\[pulse-steer-\S+\] Wrote/m);
  });

  it('--all --wait follows every project the daemon serves and exits 0 only once each one’s agents acknowledged', async () => {
    const { project: first, daemon } = await served();
    const second = await newProject();
    expect((await runCli(['start', '-p', second, '--port', String(daemon.port)])).code).toBe(0);
    const { url } = recordedDaemon(second);
    const inFirst = await agent(daemon);
    const inSecond = await agent({ url } as RunningDaemon);
    const guide = pulseRunning(started, [
      'guide',
      'Freeze the API.',
      '--all',
      '--port',
      String(daemon.port),
      '--wait',
    ]);
    await guide.printed(/Waiting up to 10m/);
    const eventIn = (project: string) =>
      new RegExp(`in ${project}: logged as (evt_\\S+)\\.`).exec(guide.output())![1]!;
    const [firstEvent, secondEvent] = [eventIn(first), eventIn(second)];

    await callTool(inSecond, 'pulse_ack_replan', { event_id: secondEvent });
    await guide.printed(new RegExp(`${labelPattern(inSecond)} acknowledged ${secondEvent}`));
    // One project's agent is done, the other's still owes: still waiting.
    expect(guide.child.exitCode).toBeNull();

    await callTool(inFirst, 'pulse_ack_replan', { event_id: firstEvent });
    expect(await guide.exited).toBe(0);
    for (const [project, event, client] of [
      [first, firstEvent, inFirst],
      [second, secondEvent, inSecond],
    ] as const) {
      const id = `${project.split('/').at(-1)}-[0-9a-f]{8}`;
      expect(guide.output()).toMatch(
        new RegExp(`^\\[${id}\\] ${labelPattern(client)} acknowledged ${event} `, 'm'),
      );
      expect(guide.output()).toMatch(
        new RegExp(`^\\[${id}\\] Every agent has acknowledged ${event}\\.$`, 'm'),
      );
    }
  });
});

describe('what is kept', () => {
  it('keeps each ack with its plan diff across a restart: in state.json, pulse status without a daemon, and /status after', async () => {
    const { project, daemon } = await served();
    const a = await agent(daemon);
    const event = /logged as (evt_\S+)\./.exec(
      (await runCli(['guide', 'Smaller.', '-p', project])).stdout,
    )![1]!;
    await writeFile(plan(project), '# Plan\n\n1. Smaller\n');
    await callTool(a, 'pulse_ack_replan', { event_id: event });
    expect(await daemon.stop()).toBe(0);

    const state = JSON.parse(await readFile(join(project, '.pulse', 'state.json'), 'utf8'));
    expect(state).toMatchObject({ schema_version: 2, last_acknowledged_event_id: event });
    expect(state.acks).toEqual([
      expect.objectContaining({
        event_id: event,
        plan_changed: true,
        diff: expect.stringContaining('+1. Smaller'),
      }),
    ]);
    const offline = await runCli(['status', '-p', project]);
    expect(offline.stdout).toMatch(
      new RegExp(`acked: +${ANY_LABEL} acknowledged ${event} .*: the plan changed: 1 line added, 1 removed`),
    );

    const again = await startDaemon(project);
    started.daemons.push(again);
    const status = (await (await fetch(new URL('status', again.url))).json()) as {
      replan: { acks: unknown[] };
    };
    expect(status.replan.acks).toEqual([expect.objectContaining({ event_id: event, plan_changed: true })]);
  });
});

describe('a daemon with a token', () => {
  it('takes pulse guide with PULSE_TOKEN, refuses it without, and takes the page’s cookie only beside its steer token', async () => {
    const project = await newProject();
    const token = 'a'.repeat(32);
    const daemon = await startDaemon(project, { args: ['--token', token] });
    started.daemons.push(daemon);
    const refused = await runCli(['guide', 'Hi.', '-p', project], { env: { PULSE_TOKEN: '' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/requires a token: set PULSE_TOKEN/);
    expect((await runCli(['guide', 'Hi.', '-p', project], { env: { PULSE_TOKEN: token } })).code).toBe(0);

    // The page: opened once with ?token=, it holds the cookie; its token sits in the page.
    const origin = new URL(daemon.url).origin;
    const login = await fetch(`${origin}/?token=${token}`, { redirect: 'manual' });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${origin}/`, { headers: { cookie } })).text();
    const steerToken = /<meta name="pulse-steer-token" content="([^"]+)">/.exec(page)![1]!;
    const post = (headers: Record<string, string>) =>
      fetch(`${origin}/steer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, ...headers },
        body: JSON.stringify({ file: 'guidance', text: 'From the page.' }),
      });
    // Neither the page's steer token nor the cookie alone is the daemon's token.
    expect((await post({ 'x-pulse-steer-token': steerToken })).status).toBe(401);
    expect((await post({ cookie })).status).toBe(401);
    expect((await post({ cookie, 'x-pulse-steer-token': steerToken })).status).toBe(200);
  });
});

describe('the steer route: only the CLI and pulse’s own page may write', () => {
  it('refuses a page of another origin (another localhost port), a request without the page’s token (403), and a text past any request (413)', async () => {
    const { project, daemon } = await served();
    const steer = new URL('steer', daemon.url).href;
    const body = JSON.stringify({ file: 'guidance', text: 'From a page', mode: 'replace' });
    const post = (headers: Record<string, string>) =>
      fetch(steer, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const origin = new URL(daemon.url).origin;
    const page = await (await fetch(new URL('./', daemon.url))).text();
    const token = /<meta name="pulse-steer-token" content="([^"]+)">/.exec(page)![1]!;

    const foreign = await post({
      origin: `http://127.0.0.1:${daemon.port + 1}`,
      'x-pulse-steer-token': token,
    });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error).toBe(
      `Origin "http://127.0.0.1:${daemon.port + 1}" is not pulse's own page (${origin}): a page of another origin may not call pulse.`,
    );
    const tokenless = await post({ origin });
    expect(tokenless.status).toBe(403);
    expect((await tokenless.json()).error).toMatch(/does not carry this status page's token/);
    const wrong = await post({ origin, 'x-pulse-steer-token': 'not-it' });
    expect(wrong.status).toBe(403);
    const anonymous = await post({});
    expect(anonymous.status).toBe(403);
    expect(await readEvents(project)).toEqual([]);

    const own = await post({ origin, 'x-pulse-steer-token': token });
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({
      changed: true,
      file: 'guidance',
      event_id: expect.stringMatching(/^evt_/),
    });
    const read = await fetch(`${steer}?file=guidance`, { headers: { 'x-pulse-steer-token': token } });
    expect(await read.json()).toEqual({ file: 'guidance', text: 'From a page\n' });
    expect((await fetch(`${steer}?file=guidance`)).status).toBe(403);

    // A text too long for any request, pasted in the page: refused in the file's words, nothing written.
    const huge = await fetch(steer, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, 'x-pulse-steer-token': token },
      body: JSON.stringify({ file: 'guidance', text: 'x'.repeat(300_000) }),
    });
    expect(huge.status).toBe(413);
    expect((await huge.json()).error).toBe(
      'The request is over 262144 bytes: guidance and constraints hold at most 64 KiB, what agents read whole. Say it shorter.',
    );
    expect(await readFile(guidance(project), 'utf8')).toBe('From a page\n');
  });
});
