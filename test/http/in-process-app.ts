import { waitFor } from 'xstate';
import { createHttpApp } from '../../src/http/app.js';
import { pulsePaths } from '../../src/store/paths.js';
import { projectId } from '../../src/store/project-id.js';
import { ensurePulseFolder } from '../../src/store/pulse-folder.js';
import { logOf } from '../../src/system/ask-actors.js';
import { createPulseSystem } from '../../src/system/wiring.js';
import { removeProject, tempProject } from '../support/daemon.js';

/** What the HTTP layer is built with, beside the project's actors. */
type AppOptions = Omit<Parameters<typeof createHttpApp>[0], 'actor' | 'projectRoot'>;

/** What a request is sent with: its init, the address it comes from (loopback unless told), and its account. */
interface RequestOptions extends RequestInit {
  peer?: string;
  /** The uid the kernel would name for the connection (this process's unless told; null: none). */
  uid?: number | null;
}

/** The in-process stand-in for the kernel's socket tables: the uid the fake socket carries. */
const fakePeerUid = (socket: object) => {
  const { uid } = socket as { uid?: number | null };
  return uid === undefined ? (process.getuid?.() ?? 0) : uid;
};

/**
 * The daemon's HTTP app on a real actor system over a temp project, answered in process through
 * Hono's `app.request()` (no port). `prepare` writes the project's files before the system loads
 * them; `stop` ends the sessions, the actors and the folder.
 */
export const inProcessApp = async (
  options: AppOptions = {},
  prepare: (project: string) => Promise<void> = async () => {},
) => {
  const project = await tempProject('pulse-inprocess-');
  const paths = pulsePaths(project);
  await ensurePulseFolder(paths);
  await prepare(project);
  const system = await createPulseSystem(paths, { log: () => {}, env: {} });
  system.actor.start();
  await waitFor(logOf(system.actor), (s) => s.matches('ready'));
  const { app, closeSessions } = createHttpApp({
    actor: system.actor,
    projectRoot: project,
    peerUid: fakePeerUid,
    ...options,
  });
  return {
    project,
    /** The project's id, as `/p/<id>/` names it. */
    id: projectId(project),
    actor: system.actor,
    /** One request as a client at `peer` sends it; Node's server binding is the only stand-in. */
    request: (path: string, { peer = '127.0.0.1', uid, ...init }: RequestOptions = {}) =>
      app.request(path, init, { incoming: { socket: { remoteAddress: peer, uid } } }),
    stop: async () => {
      await closeSessions();
      await system.stop();
      await removeProject(project);
    },
  };
};

/** A served app, as `inProcessApp` returns it. */
export type InProcessApp = Awaited<ReturnType<typeof inProcessApp>>;
