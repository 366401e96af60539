import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach } from 'vitest';
import { type RunningDaemon, removeProject, startDaemon, tempProject } from '../support/daemon.js';

/**
 * Daemons started with flags on fresh projects, and the clients a test keeps: after each test
 * the clients are closed, then the daemons stopped and their projects removed.
 */
export const useDaemons = (prefix: string) => {
  const daemons: RunningDaemon[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
    for (const daemon of daemons.splice(0)) {
      await daemon.stop().then(() => daemon.kill9());
      await removeProject(daemon.project);
    }
  });
  return {
    /** `pulse start` with `args`, run through `command` when given (e.g. a shell that lowers a limit). */
    async start(args: string[], command: string[] = []): Promise<RunningDaemon> {
      const project = await tempProject(prefix);
      const daemon = await startDaemon(project, { args, prefix: command }).catch(async (error) => {
        await removeProject(project);
        throw error;
      });
      daemons.push(daemon);
      return daemon;
    },
    keep<C extends Client>(client: C): C {
      clients.push(client);
      return client;
    },
  };
};
