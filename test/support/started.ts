import type { ChildProcess } from 'node:child_process';
import type { Server } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach } from 'vitest';
import { type RunningDaemon, removeProject, startDaemon, tempProject } from './daemon.js';

/** Kills a child process and resolves once it has exited, so nothing writes into a folder being removed. */
const killAndWait = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    // A child that never started (no pid) has nothing to wait for.
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/**
 * What a test file starts, kept so one `afterEach(started.cleanUp)` leaves nothing behind: open
 * streams and clients first, then processes and servers, the folders last.
 */
export const trackStarted = () => {
  const started = {
    projects: [] as string[],
    daemons: [] as RunningDaemon[],
    clients: [] as Client[],
    children: [] as ChildProcess[],
    servers: [] as Server[],
    streams: [] as Array<{ close(): void }>,
    async cleanUp(): Promise<void> {
      for (const stream of started.streams.splice(0)) stream.close();
      await Promise.allSettled(started.clients.splice(0).map((client) => client.close()));
      await Promise.all(started.children.splice(0).map(killAndWait));
      await Promise.all(started.daemons.splice(0).map((daemon) => daemon.stop().then(() => daemon.kill9())));
      await Promise.all(
        started.servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
      );
      await Promise.all(started.projects.splice(0).map(removeProject));
    },
  };
  return started;
};

/**
 * Daemons started with flags on fresh projects, and the clients a test keeps: after each test
 * the clients are closed, then the daemons stopped and their projects removed.
 */
export const useDaemons = (prefix: string) => {
  const started = trackStarted();
  afterEach(started.cleanUp);
  return {
    /** `pulse start` with `args`, run through `command` when given (e.g. a shell that lowers a limit). */
    async start(args: string[] = [], command: string[] = []): Promise<RunningDaemon> {
      const project = await tempProject(prefix);
      started.projects.push(project);
      const daemon = await startDaemon(project, { args, prefix: command });
      started.daemons.push(daemon);
      return daemon;
    },
    keep<C extends Client>(client: C): C {
      started.clients.push(client);
      return client;
    },
  };
};
