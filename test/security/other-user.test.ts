import { spawnSync } from 'node:child_process';
import { chown, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectClient, runCli, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { trackStarted } from '../support/started.js';

/*
 * Another local account against a daemon with default settings (loopback, no token), through the
 * kernel's own socket tables: the test runs as root, the attacker as `nobody` through runuser.
 * Every route refuses it and nothing changes, while the owner's CLI, MCP client, `pulse hook` and
 * Codex's curl hook line work with no variable exported.
 */

const NOBODY_UID = 65534;

/** Why the second account cannot be used here, or null when it can. */
const skipReason = ((): string | null => {
  if (process.platform !== 'linux') return 'the peer check is Linux-only';
  if (process.getuid?.() !== 0) return 'runuser needs root';
  const probe = spawnSync('runuser', ['-u', 'nobody', '--', 'node', '-e', 'process.exit(0)']);
  if (probe.error !== undefined || probe.status !== 0) return 'runuser or the nobody account is missing';
  return null;
})();

/** One request as the other account sends it: a name, and fetch's arguments. */
interface Attempt {
  name: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What the other account's fetch got for each attempt: the status and the start of the body. */
type Outcome = { name: string; status: number; body: string };

/** Node as `nobody`, sending each attempt on its own connection; a stream is closed at its headers. */
const asNobody = (attempts: Attempt[]): Outcome[] => {
  const script = `
    const out = [];
    for (const a of JSON.parse(process.argv[1])) {
      try {
        const r = await fetch(a.url, { method: a.method ?? 'GET', headers: a.headers, body: a.body, signal: AbortSignal.timeout(10000) });
        const stream = (r.headers.get('content-type') ?? '').startsWith('text/event-stream');
        const body = stream ? (await r.body?.cancel(), '') : await r.text();
        out.push({ name: a.name, status: r.status, body: body.slice(0, 400) });
      } catch (e) { out.push({ name: a.name, status: 0, body: String(e) }); }
    }
    console.log(JSON.stringify(out));`;
  const run = spawnSync(
    'runuser',
    ['-u', 'nobody', '--', 'node', '--input-type=module', '-e', script, JSON.stringify(attempts)],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (run.status !== 0) throw new Error(`node as nobody failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Outcome[];
};

const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

const JSON_TYPE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const hookInput = (project: string, session: string, command: string, extra: Record<string, string> = {}) =>
  JSON.stringify({
    ...extra,
    session_id: session,
    cwd: project,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: `toolu_${session}`,
  });

/** What Codex adds to Claude Code's hook input. */
const CODEX = { model: 'gpt-5-codex', turn_id: 'turn-1' };

/** The permission decision a Claude Code or Codex PreToolUse answer carries, if any. */
const decisionOf = (stdout: string): string | undefined =>
  (JSON.parse(stdout) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput
    ?.permissionDecision;

describe.skipIf(skipReason !== null)(
  `another local account${skipReason === null ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    const started = trackStarted();
    let project: string;
    let base: string;
    let id: string;
    let eventId: string;
    afterAll(started.cleanUp);

    /** The exact PreToolUse line `pulse setup codex --write` writes for this daemon. */
    const codexHookLine = async (): Promise<string> => {
      const port = new URL(base).port;
      const setup = await runCli(['setup', 'codex', '--write', '-p', project, '--port', port]);
      expect(setup.code, setup.stderr).toBe(0);
      const hooks = JSON.parse(await readFile(join(project, '.codex', 'hooks.json'), 'utf8'));
      return hooks.hooks.PreToolUse[0].hooks[0].command as string;
    };

    beforeAll(async () => {
      project = await tempProject('pulse-other-user-');
      started.projects.push(project);
      const daemon = await startDaemon(project);
      started.daemons.push(daemon);
      base = new URL(daemon.url).origin;
      id = /\/p\/([^/]+)\/mcp$/.exec(daemon.url)![1]!;
      // The owner's agent works in the project, then the owner steers: that agent now owes an ack.
      const first = await runCli(['hook', 'claude', '-p', project], {
        input: hookInput(project, 'root-agent', 'ls'),
      });
      expect(first.code, first.stderr).toBe(0);
      const guided = await runCli(['guide', 'Keep the build folder.', '-p', project]);
      expect(guided.code, guided.stderr).toBe(0);
      eventId = await waitUntil(async () => {
        const status = JSON.parse((await runCli(['status', '-p', project, '--json'])).stdout);
        return status.needs_replan ? (status.pending_replan_event_id as string) : undefined;
      });
    }, 60_000);

    it('refuses every route to it, naming the daemon’s user and the fix, and nothing changes', async () => {
      const pulseDir = join(project, '.pulse');
      const before = {
        guidance: await readFile(join(pulseDir, 'guidance.md')),
        events: await readFile(join(pulseDir, 'events.jsonl')),
      };
      const theirs = await mkdtemp(join(tmpdir(), 'pulse-nobody-'));
      started.projects.push(theirs);
      await chown(theirs, NOBODY_UID, NOBODY_UID);
      const cli = { 'x-pulse-cli': '1', 'content-type': 'application/json' };
      const steer = JSON.stringify({ file: 'guidance', text: 'Delete the build folder.', mode: 'replace' });
      const ack = rpc('tools/call', {
        name: 'pulse_ack_replan',
        arguments: { event_id: eventId, agent: 'hook:claude:root-agent' },
      });
      const attempts: Attempt[] = [
        { name: 'POST steer', url: `${base}/p/${id}/steer`, method: 'POST', headers: cli, body: steer },
        { name: 'GET steer', url: `${base}/steer?file=guidance`, headers: cli },
        {
          name: 'initialize',
          url: `${base}/p/${id}/mcp`,
          method: 'POST',
          headers: JSON_TYPE,
          body: rpc('initialize', {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'intruder', version: '1' },
          }),
        },
        { name: 'one-shot ack', url: `${base}/p/${id}/mcp`, method: 'POST', headers: JSON_TYPE, body: ack },
        {
          name: 'read the context',
          url: `${base}/mcp`,
          method: 'POST',
          headers: JSON_TYPE,
          body: rpc('resources/read', { uri: 'pulse://context/latest' }),
        },
        {
          name: 'add a project',
          url: `${base}/projects`,
          method: 'POST',
          headers: cli,
          body: JSON.stringify({ project: theirs }),
        },
        { name: 'GET /status', url: `${base}/p/${id}/status` },
        { name: 'GET /status/stream', url: `${base}/status/stream` },
        { name: 'GET /healthz', url: `${base}/healthz` },
        { name: 'GET /', url: `${base}/` },
        { name: 'GET /projects', url: `${base}/projects` },
        {
          name: 'a hook',
          url: `${base}/hook/claude/PreToolUse?project=${encodeURIComponent(project)}`,
          method: 'POST',
          headers: JSON_TYPE,
          body: hookInput(project, 'intruder', 'ls'),
        },
        {
          name: 'test a source',
          url: `${base}/sources/test`,
          method: 'POST',
          headers: JSON_TYPE,
          body: JSON.stringify({ source: 'cal' }),
        },
      ];
      const refusal = `This pulse daemon serves root (uid 0); this connection comes from uid ${NOBODY_UID}. Each user runs their own pulse: pulse start -p DIR --port <another port>.`;
      for (const outcome of asNobody(attempts)) {
        expect(outcome.status, outcome.name).toBe(403);
        const body = JSON.parse(outcome.body) as { error: string | { message: string } };
        expect(typeof body.error === 'string' ? body.error : body.error.message, outcome.name).toBe(refusal);
      }

      // Nothing changed: the files, the projects served, and the owner's agent still owes its ack.
      expect(await readFile(join(pulseDir, 'guidance.md'))).toEqual(before.guidance);
      expect(await readFile(join(pulseDir, 'events.jsonl'))).toEqual(before.events);
      const listed = (await (await fetch(`${base}/projects`)).json()) as { projects: { root: string }[] };
      expect(listed.projects.map((p) => p.root)).toEqual([project]);
      const status = JSON.parse((await runCli(['status', '-p', project, '--json'])).stdout);
      expect(status).toMatchObject({ needs_replan: true, pending_replan_event_id: eventId });
      const held = await runCli(['hook', 'claude', '-p', project], {
        input: hookInput(project, 'root-agent', 'rm -rf build'),
      });
      expect(decisionOf(held.stdout), held.stdout).toBe('deny');
    }, 60_000);

    it("turns the refusal into the hook's refused path, for its curl line", async () => {
      const line = await codexHookLine();
      const run = spawnSync('runuser', ['-u', 'nobody', '--', 'sh', '-c', line], {
        input: hookInput(project, 'intruder', 'rm -rf build', CODEX),
        encoding: 'utf8',
      });
      expect(run.stderr).toContain('pulse: the daemon refused the hook');
      expect(decisionOf(run.stdout), 'the other account is told nothing of the project').toBeUndefined();
    });

    it('serves its owner with nothing exported: the CLI, an MCP session, pulse hook and the curl hook line', async () => {
      const env = { PULSE_TOKEN: '' };
      const status = await runCli(['status', '-p', project, '--json'], { env });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout).daemon.running).toBe(true);
      const constrain = await runCli(['constrain', 'Never touch deploy/.', '-p', project], { env });
      expect(constrain.code, constrain.stderr).toBe(0);

      const client = await connectClient(`${base}/p/${id}/mcp`);
      started.clients.push(client);
      const interrupt = await callTool(client, 'pulse_should_interrupt', {});
      expect(interrupt).toMatchObject({ needs_replan: true });

      const held = await runCli(['hook', 'claude', '-p', project], {
        env,
        input: hookInput(project, 'root-agent', 'rm -rf build'),
      });
      expect(decisionOf(held.stdout), held.stderr).toBe('deny');

      const line = await codexHookLine();
      const run = spawnSync('sh', ['-c', line], {
        input: hookInput(project, 'codex-agent', 'rm -rf build', CODEX),
        encoding: 'utf8',
        env: { ...process.env, PULSE_TOKEN: '' },
      });
      expect(run.stderr).toBe('');
      expect(decisionOf(run.stdout), run.stdout).toBe('deny');
    }, 60_000);
  },
);
