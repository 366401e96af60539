import { execFile, execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/package/version.js';
import { groupedLayout } from '../../src/setup/hook-entries.js';
import {
  autostartHookCommand,
  curlHookCommand,
  findPulseHook,
  hookHandler,
  nodeHookCommand,
  reachesTarget,
  shellQuote,
  stableBinCommand,
} from '../../src/setup/hook-handlers.js';

const RUNTIME = { nodePath: '/n/node', cliPath: '/p/dist/src/bin.cjs' };
const PROJECT = "/home/me/it's a project";

const servers: Server[] = [];
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done)))));

/** A stand-in daemon: records what it was posted, answers with `answer` (or never, when null). */
const daemon = async (answer: { status: number; body: string } | null) => {
  const posted: Array<{ url: string; body: string; auth: string | undefined }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      posted.push({ url: req.url!, body, auth: req.headers.authorization });
      if (answer !== null) res.writeHead(answer.status).end(answer.body);
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { port: (server.address() as AddressInfo).port, posted };
};

/** Runs a hook command as Codex and Cursor do: through a POSIX shell, the hook JSON on stdin. */
const sh = (command: string, stdin: string, env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      'sh',
      ['-c', command],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });

describe('the node hook command', () => {
  it('quotes paths so that a shell passes them on unchanged, spaces and $ included', () => {
    for (const path of ['/opt/node 20/bin/node', '/home/a$HOME/`x`/"q"/back\\slash', "/it's/fine"]) {
      const echoed = execFileSync('sh', ['-c', `printf %s ${shellQuote(path, 'linux')}`], {
        encoding: 'utf8',
      });
      expect(echoed).toBe(path);
    }
    expect(shellQuote('C:\\Program Files\\node.exe', 'win32')).toBe('"C:\\Program Files\\node.exe"');
  });

  it('is node, the CLI and `hook <agent> --event <event>`, and is recognised with its paths', () => {
    const command = nodeHookCommand('cursor', 'stop', RUNTIME);
    expect(command).toBe('"/n/node" "/p/dist/src/bin.cjs" hook cursor --event stop');
    expect(findPulseHook('cursor', 'stop', { command })).toEqual({ transport: 'node', runtime: RUNTIME });
    expect(findPulseHook('cursor', 'beforeSubmitPrompt', { command })).toBeNull();
  });
});

describe('the curl hook command', () => {
  it("posts the agent's JSON to the daemon's route for this project and prints the answer as it is", async () => {
    const { port, posted } = await daemon({ status: 200, body: '{"decision":"block","reason":"r"}' });
    const command = curlHookCommand('codex', 'Stop', { port, project: PROJECT, pulse: 'pulse' });
    const input = '{"session_id":"s","hook_event_name":"Stop","text":"a \'quoted\' $HOME `x`"}';
    const { code, stdout, stderr } = await sh(command, input, { PULSE_TOKEN: 'secret-token-1234' });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe('{"decision":"block","reason":"r"}\n');
    expect(posted).toEqual([
      {
        url: `/hook/codex/Stop?project=${encodeURIComponent(PROJECT).replace("'", '%27')}`,
        body: input,
        auth: 'Bearer secret-token-1234',
      },
    ]);
  });

  it('lets the agent go on and says once why when nothing answers on the port: stderr, and a systemMessage where the agent shows one', async () => {
    const { port } = await daemon(null);
    servers.pop()!.close();
    const why = `pulse: the daemon is not running at 127.0.0.1:${port} for ${PROJECT}; not enforcing replans. Start it with: pulse start -p ${PROJECT} --port ${port}`;
    const cursor = await sh(
      curlHookCommand('cursor', 'beforeShellExecution', { port, project: PROJECT, pulse: 'pulse' }),
      '{}',
    );
    expect(cursor).toEqual({ code: 0, stdout: '{"permission":"allow"}\n', stderr: `${why}\n` });
    const codex = await sh(
      curlHookCommand('codex', 'PreToolUse', { port, project: PROJECT, pulse: 'pulse' }),
      '{}',
    );
    expect(codex.code).toBe(0);
    expect(JSON.parse(codex.stdout)).toEqual({ systemMessage: why });
    expect(codex.stderr).toBe(`${why}\n`);
  });

  it('gives up within its time limit on a daemon that never answers, and on a refusal (401)', async () => {
    const silent = await daemon(null);
    // curl's own limit ends it (exit 28, named in the message); a hang would end the test instead.
    const hung = await sh(
      curlHookCommand('cursor', 'stop', { port: silent.port, project: PROJECT, pulse: 'pulse' }),
      '{}',
    );
    expect(hung.stdout).toBe('{}\n');
    expect(hung.stderr).toMatch(/^pulse: the daemon did not answer within 8 s at 127\.0\.0\.1:\d+ for /);

    const refusing = await daemon({ status: 401, body: '{"error":"This pulse daemon requires a token."}' });
    const refused = await sh(
      curlHookCommand('claude', 'Stop', { port: refusing.port, project: PROJECT, pulse: 'pulse' }),
      '{}',
    );
    expect(JSON.parse(refused.stdout).systemMessage).toMatch(
      /^pulse: the daemon refused the hook \(is PULSE_TOKEN set\?\) at /,
    );
  });

  it('is recognised with its port and project', () => {
    const command = curlHookCommand('codex', 'Stop', { port: 9000, project: PROJECT, pulse: 'pulse' });
    expect(findPulseHook('codex', 'Stop', { type: 'command', command })).toEqual({
      transport: 'curl',
      port: 9000,
      project: PROJECT,
    });
    expect(findPulseHook('claude', 'Stop', { type: 'command', command })).toBeNull();
  });
});

describe('which pulse hooks reach the daemon being set up', () => {
  const target = { port: 8765, project: PROJECT, runtime: RUNTIME, pulse: 'pulse' };

  it('the same port and project by http or curl, or this node and clone (bin.cjs, or an older cli.js)', () => {
    const http = hookHandler('claude', 'Stop', 'http', target, groupedLayout);
    expect(http).toMatchObject({
      type: 'http',
      url: expect.stringContaining('127.0.0.1:8765/hook/claude/Stop?project='),
    });
    expect(reachesTarget(findPulseHook('claude', 'Stop', http)!, target)).toBe(true);
    expect(reachesTarget(findPulseHook('claude', 'Stop', http)!, { ...target, port: 9000 })).toBe(false);
    expect(reachesTarget(findPulseHook('claude', 'Stop', http)!, { ...target, project: '/other' })).toBe(
      false,
    );
    const older = { command: '"/n/node" "/p/dist/src/cli.js" hook claude --event Stop' };
    expect(reachesTarget(findPulseHook('claude', 'Stop', older)!, target)).toBe(true);
    const elsewhere = { command: '"/old/node" "/old/dist/src/bin.cjs" hook claude --event Stop' };
    expect(reachesTarget(findPulseHook('claude', 'Stop', elsewhere)!, target)).toBe(false);
  });
});

describe('the session-start hook of --autostart', () => {
  const target = { port: 8765, project: '/home/me/my "app"', runtime: RUNTIME, pulse: 'pulse' };

  it('runs pulse hook --autostart with the project and port, and is found again as pulse’s', () => {
    const command = autostartHookCommand('claude', 'SessionStart', target);
    expect(command).toBe(
      '"/n/node" "/p/dist/src/bin.cjs" hook claude --event SessionStart --autostart -p "/home/me/my \\"app\\"" --port 8765',
    );
    const found = findPulseHook('claude', 'SessionStart', { type: 'command', command });
    expect(found).toEqual({
      transport: 'autostart',
      port: 8765,
      project: '/home/me/my "app"',
      runtime: RUNTIME,
    });
    expect(reachesTarget(found!, target)).toBe(true);
    expect(reachesTarget(found!, { ...target, port: 9000 })).toBe(false);
    expect(findPulseHook('codex', 'SessionStart', { type: 'command', command })).toBeNull();
  });

  it('runs npx with this version when pulse lives in npm’s cache, which npm may clean', () => {
    const cached = {
      nodePath: '/n/node',
      cliPath: join(homedir(), '.npm', '_npx', 'x', 'dist', 'bundle', 'bin.cjs'),
    };
    expect(stableBinCommand(cached)).toBe(`npx -y pulse-agent@${VERSION}`);
    expect(stableBinCommand(RUNTIME)).toBe('"/n/node" "/p/dist/src/bin.cjs"');
    // Found again as pulse's, with no node and bin of its own (doctor then checks npx is there).
    const command = autostartHookCommand('claude', 'SessionStart', { ...target, runtime: cached });
    expect(findPulseHook('claude', 'SessionStart', { type: 'command', command })).toEqual({
      transport: 'autostart',
      port: 8765,
      project: '/home/me/my "app"',
      runtime: null,
    });
  });
});
