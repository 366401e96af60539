import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkSecurity } from '../../src/doctor/security-checks.js';
import { removeProject, tempProject } from '../support/daemon.js';

/** Why the second account cannot be used here, or null. */
const otherAccount =
  process.getuid?.() !== 0 || spawnSync('runuser', ['-u', 'nobody', '--', 'true']).status !== 0
    ? 'needs root and runuser -u nobody'
    : null;
const LISTEN =
  "const s=require('net').createServer().listen(0,'127.0.0.1',()=>process.stdout.write(String(s.address().port)))";

let project: string;
let home: string;
beforeEach(async () => {
  project = await tempProject();
  home = await tempProject('pulse-state-');
  await mkdir(join(project, '.pulse'));
  await writeFile(join(project, '.pulse', 'guidance.md'), '# Guidance\n');
});
afterEach(async () => {
  await removeProject(project);
  await removeProject(home);
});

const env = () => ({ XDG_STATE_HOME: home });
/** A privileged port nothing here listens on. */
const FREE_PORT = 1;
const problems = async (extra: NodeJS.ProcessEnv = {}) =>
  (await checkSecurity(project, FREE_PORT, { ...env(), ...extra })).filter((finding) => !finding.ok);

describe('pulse doctor: security', () => {
  it("finds nothing wrong in a project only its owner and the owner's group may write", async () => {
    await chmod(project, 0o755);
    // Debian's user private groups make group-writable the default (umask 002).
    await chmod(join(project, '.pulse'), 0o775);
    await chmod(join(project, '.pulse', 'guidance.md'), 0o664);
    expect(await problems()).toEqual([]);
  });

  it('names a guidance.md or .pulse/ that every account may write, with the chmod that closes it', async () => {
    await chmod(join(project, '.pulse'), 0o777);
    await chmod(join(project, '.pulse', 'guidance.md'), 0o666);
    const [found] = await problems();
    expect(found?.message).toContain(join(project, '.pulse', 'guidance.md'));
    expect(found?.message).toContain(`${join(project, '.pulse')},`);
    expect(found?.fix).toMatch(/^chmod o-w /);
  });

  it('takes a world-writable folder with the sticky bit as closed, as /tmp is', async () => {
    await chmod(project, 0o1777);
    expect(await problems()).toEqual([]);
  });

  it('names a committed config that carries a token itself, never one that names the variable', async () => {
    await writeFile(
      join(project, '.mcp.json'),
      // The entry pulse setup writes, which names the variable.
      '{"mcpServers":{"pulse":{"headers":{"Authorization":"Bearer $' + '{PULSE_TOKEN:-}"}}}}',
    );
    expect(await problems()).toEqual([]);
    await mkdir(join(project, '.gemini'));
    await writeFile(
      join(project, '.gemini', 'settings.json'),
      JSON.stringify({
        mcpServers: { pulse: { headers: { Authorization: 'Bearer 0123456789abcdef0123' } } },
      }),
    );
    const [found] = await problems();
    expect(found?.message).toMatch(/^\.gemini\/settings\.json holds a token written out/);
    expect(found?.message).not.toContain('0123456789abcdef0123');
  });

  it('names a config holding the value of PULSE_TOKEN, in whatever form', async () => {
    await writeFile(
      join(project, 'opencode.json'),
      '{"mcp":{"pulse":{"headers":{"x":"tok_ABCDEFGH12345678"}}}}',
    );
    expect(await problems()).toEqual([]);
    const [found] = await problems({ PULSE_TOKEN: 'tok_ABCDEFGH12345678' });
    expect(found?.message).toContain('opencode.json');
  });

  it('says where the system cannot tell who connects, until a token closes the daemon', async () => {
    const onMac = (extra: NodeJS.ProcessEnv) =>
      checkSecurity(project, FREE_PORT, { ...env(), ...extra }, 'darwin');
    const [found] = (await onMac({})).filter((finding) => !finding.ok);
    expect(found?.message).toMatch(/^other local accounts can reach this daemon: on macOS/);
    expect(found?.fix).toContain('PULSE_TOKEN=$(openssl rand -hex 32)');
    expect((await onMac({ PULSE_TOKEN: 'x'.repeat(32) })).filter((finding) => !finding.ok)).toEqual([]);
    expect(await problems()).toEqual([]);
  });

  it.skipIf(otherAccount !== null)(
    "names another account's listener on the agents' port, and not the user's own",
    async () => {
      const own = createServer();
      await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
      const ownPort = (own.address() as AddressInfo).port;
      expect((await checkSecurity(project, ownPort, env())).filter((f) => !f.ok)).toEqual([]);
      own.close();
      const squatter = spawn('runuser', ['-u', 'nobody', '--', process.execPath, '-e', LISTEN], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        const port = Number(
          await new Promise<string>((resolve) => squatter.stdout.once('data', (d) => resolve(String(d)))),
        );
        const [found] = (await checkSecurity(project, port, env())).filter((f) => !f.ok);
        expect(found?.message).toContain(
          `port ${port}, where your agents' hooks and MCP entry point, is held by another account (uid 65534)`,
        );
      } finally {
        squatter.kill();
      }
    },
  );

  it("says when pulse's own state folder is open to others, and not when it is not made yet", async () => {
    expect(await problems()).toEqual([]);
    await mkdir(join(home, 'pulse-agent'), { mode: 0o777 });
    await chmod(join(home, 'pulse-agent'), 0o777);
    const [found] = await problems();
    expect(found?.message).toMatch(/state folder .* can be written by other users/);
    expect(found?.fix).toContain('chmod 700');
  });
});
