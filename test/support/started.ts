import type { ChildProcess } from 'node:child_process';
import type { Server } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type RunningDaemon, removeProject } from './daemon.js';

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
      for (const child of started.children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
      await Promise.all(started.daemons.splice(0).map((daemon) => daemon.stop().then(() => daemon.kill9())));
      await Promise.all(
        started.servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
      );
      await Promise.all(started.projects.splice(0).map(removeProject));
    },
  };
  return started;
};
