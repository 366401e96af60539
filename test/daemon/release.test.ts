import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempProject } from '../support/daemon.js';
import { daemonRecord } from '../support/daemon-record.js';
import { runNode } from '../support/processes.js';
import { trackStarted } from '../support/started.js';

/*
 * A daemon started in a process of its own (test/fixtures/daemon-release.mjs), which never calls
 * process.exit: it ends by itself only once the daemon released every server, socket and timer
 * it acquired. Whatever the start or close left open keeps it running, and runNode fails.
 */

const SCRIPT = fileURLToPath(new URL('../fixtures/daemon-release.mjs', import.meta.url));
const INSPECTOR = fileURLToPath(new URL('../fixtures/inspector-close.mjs', import.meta.url));

const started = trackStarted();
afterEach(() => started.cleanUp());

/** A port nothing listens on now. */
const freePort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
};

/** A server holding a port, as another program would. */
const holdPort = async (): Promise<{ server: Server; port: number }> => {
  const server = createServer((socket) => socket.resume());
  started.servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
};

const run = async (options: { project: string; port: number; inspect?: boolean; inspectPort?: number }) => {
  const { code, stdout, stderr } = await runNode(SCRIPT, [JSON.stringify(options)], { timeoutMs: 20_000 });
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    started?: string;
    refused?: string;
    port_free: boolean;
    inspect_port_free: boolean | null;
  };
};

describe('what a daemon start acquires, it releases', () => {
  it('a start refused at its last step (the project folder cannot be created) frees its port and the inspector’s, and leaves nothing running', async () => {
    const parent = join(await tempProject('pulse-release-'), 'no-such-folder');
    started.projects.push(join(parent, '..'));
    const project = join(parent, 'my-project');
    const port = await freePort();
    const inspectPort = await freePort();

    const result = await run({ project, port, inspect: true, inspectPort });

    expect(result.refused).toContain(`Project folder ${project} does not exist, and neither does ${parent}`);
    expect(result).toMatchObject({ port_free: true, inspect_port_free: true });
    expect(existsSync(parent)).toBe(false);
  });

  it('a start whose inspector port is taken frees the HTTP port it had bound, starts no project, and leaves nothing running', async () => {
    const project = await tempProject('pulse-release-');
    started.projects.push(project);
    const port = await freePort();
    const taken = await holdPort();

    const result = await run({ project, port, inspect: true, inspectPort: taken.port });

    expect(result.refused).toBeDefined();
    expect(result.port_free).toBe(true);
    expect(daemonRecord(project)).toBeNull();
  });

  it('close releases everything it started: the port and the inspector’s are free, its daemon record is gone, and the process exits by itself', async () => {
    const project = await tempProject('pulse-release-');
    started.projects.push(project);
    const port = await freePort();
    const inspectPort = await freePort();

    const result = await run({ project, port, inspect: true, inspectPort });

    expect(result).toEqual({ started: 'serving', port_free: true, inspect_port_free: true });
    expect(existsSync(join(project, '.pulse', 'events.jsonl')), 'the project was opened').toBe(true);
    expect(daemonRecord(project)).toBeNull();
  });

  it('an inspector closed the moment it started lets the process end: its socket does not reconnect to the closed relay', async () => {
    const { code, stdout, stderr } = await runNode(INSPECTOR, [], { timeoutMs: 20_000 });
    expect(code, stderr).toBe(0);
    expect(stdout).toBe('closed\n');
  });
});
