import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningDaemon, removeProject, runCli, startDaemon, tempProject } from '../support/daemon.js';

/*
 * `--port N` (or PULSE_PORT) picks, among this user's verified daemon records, the daemon
 * listening on N: two daemons on two ports each list their own project, and a port no record of
 * yours names gets nothing sent to it.
 */

const projects: string[] = [];
const daemons: RunningDaemon[] = [];
let stranger: Server | undefined;

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop().then(() => daemon.kill9())));
  await Promise.all(projects.splice(0).map(removeProject));
  await new Promise((resolve) => (stranger ? stranger.close(resolve) : resolve(undefined)));
  stranger = undefined;
});

const served = async (prefix: string) => {
  const project = await tempProject(prefix);
  projects.push(project);
  const daemon = await startDaemon(project);
  daemons.push(daemon);
  return { project, daemon };
};

/** An HTTP server that is no pulse of yours, counting the requests it is sent. */
const strangerPort = async (): Promise<{ port: number; requests: () => number }> => {
  let requests = 0;
  stranger = createServer((_request, response) => {
    requests += 1;
    response.end(JSON.stringify({ name: 'pulse-agent', projects: [] }));
  });
  await new Promise<void>((resolve) => stranger!.listen(0, '127.0.0.1', resolve));
  return { port: (stranger.address() as AddressInfo).port, requests: () => requests };
};

describe('--port and PULSE_PORT pick your daemon on that port', () => {
  it('pulse status --port N lists the projects of the daemon on port N, each daemon its own', async () => {
    const one = await served('pulse-port-one-');
    const two = await served('pulse-port-two-');
    for (const [mine, other] of [
      [one, two],
      [two, one],
    ] as const) {
      const status = await runCli(['status', '--port', String(mine.daemon.port), '--json']);
      expect(status.code, status.stderr).toBe(0);
      const list = JSON.parse(status.stdout) as { daemon: { url: string }; projects: { root: string }[] };
      expect(new URL(list.daemon.url).port).toBe(String(mine.daemon.port));
      expect(list.projects.map((p) => p.root)).toEqual([mine.project]);
      expect(list.projects.map((p) => p.root)).not.toContain(other.project);
    }
    const fromEnv = await runCli(['status'], { env: { PULSE_PORT: String(two.daemon.port) } });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toContain(`at http://127.0.0.1:${two.daemon.port} serves 1 project:`);
    expect(fromEnv.stdout).toContain(two.project);
  });

  it('sends nothing to a port no daemon record of yours names, even one that answers like pulse', async () => {
    await served('pulse-port-mine-');
    const { port, requests } = await strangerPort();
    for (const args of [
      ['status', '--port', String(port)],
      ['guide', 'Freeze the API.', '--all', '--port', String(port)],
    ]) {
      const run = await runCli(args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toContain(`No pulse daemon of yours listens on port ${port}`);
      expect(run.stderr).toContain('pulse sends nothing there');
    }
    expect(requests()).toBe(0);
  });

  it("refuses a project command whose daemon listens on another port, naming the daemon's port", async () => {
    const { project, daemon } = await served('pulse-port-other-');
    const { port, requests } = await strangerPort();
    for (const args of [
      ['focus', '-p', project, '--port', String(port)],
      ['sources', 'list', '-p', project, '--port', String(port)],
      ['status', '-p', project, '--port', String(port)],
      ['stop', '-p', project, '--port', String(port)],
    ]) {
      const run = await runCli(args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toContain(`listens on port ${daemon.port}, not ${port}`);
    }
    expect(requests()).toBe(0);
    expect(daemon.process.exitCode, 'the daemon still runs').toBeNull();
    const focus = await runCli(['focus', '-p', project], { env: { PULSE_PORT: String(daemon.port) } });
    expect(focus.code, focus.stderr).toBe(0);
  });
});
