import { createActor, type EventObject, fromCallback, type InspectionEvent } from 'xstate';
import { daemonMachine } from '../../machines/daemon.js';
import type { ServedEntry } from '../../machines/daemon-context.js';
import type { AppProject } from '../http/app.js';
import { type AddedProject, ProjectRefusedError } from '../http/projects-route.js';
import { pulse, shellWord } from '../package/pulse-command.js';
import { pulsePaths } from '../store/paths.js';
import { projectId } from '../store/project-id.js';
import { type OpenProject, openProject, type ProjectOptions } from './project.js';

/** What the host needs of the HTTP layer: to hold requests while a project opens, to serve its routes, and to stop. */
export interface ProjectRoutes {
  /** Requests for the project wait from now until it is attached, or the returned function gives up. */
  opening(id: string): () => void;
  attach(project: AppProject): void;
  detach(id: string): Promise<void>;
}

/**
 * The daemon's projects: the `daemonMachine` actor (one child per project, `project:<id>`) and the
 * effects it names. Opening a project (lock, folders, load) happens before `project.add`, so a
 * failure is the caller's error and never reaches the machine; stopping a child closes its
 * project. `ended` resolves once the last project is gone.
 */
export const createProjectHost = ({
  routes,
  open = openProject,
  options,
  summary,
  inspect,
}: {
  routes: ProjectRoutes;
  open?: typeof openProject;
  /** What every project opens with, but its folder and log level. */
  options: Omit<ProjectOptions, 'root' | 'logLevel'> & { logLevel: ProjectOptions['logLevel'] };
  /** The lines `pulse start` prints for a project added to this daemon. */
  summary: (project: OpenProject, beside: readonly OpenProject[]) => string[];
  inspect?: ((event: InspectionEvent) => void) | undefined;
}) => {
  const opened = new Map<string, OpenProject>();
  const opening = new Set<string>();
  /** The secrets of projects still opening, whose sources may already poll. */
  const openingSecrets = new Map<string, () => readonly string[]>();
  const closing = new Map<string, Promise<void>>();
  const close = (id: string): Promise<void> => {
    const project = opened.get(id);
    if (project === undefined) return closing.get(id) ?? Promise.resolve();
    opened.delete(id);
    const done = (async () => {
      await routes.detach(id).catch(() => undefined);
      await project.close();
    })();
    closing.set(id, done);
    return done;
  };
  const project = fromCallback<EventObject, ServedEntry>(({ input }) => () => {
    void close(input.id);
  });
  const actor = createActor(daemonMachine.provide({ actors: { project } }), inspect ? { inspect } : {});
  const ended = new Promise<void>((resolve) => {
    actor.subscribe({ complete: () => resolve() });
  });
  actor.start();

  const served = () => actor.getSnapshot().context.projects;

  return {
    actor,
    ended,
    /** The projects open now, in the order they were added. */
    projects: (): OpenProject[] => served().flatMap((p) => opened.get(p.id) ?? []),
    /** The secrets of every project's sources, for the inspector. */
    secrets: (): string[] => [
      ...[...opened.values()].flatMap((p) => [...p.secrets()]),
      ...[...openingSecrets.values()].flatMap((secrets) => [...secrets()]),
    ],
    /** Opens and serves a project; rejects with a `ProjectRefusedError` saying why it cannot. */
    async add({
      root,
      logLevel,
      notify,
    }: {
      root: string;
      logLevel?: ProjectOptions['logLevel'] | undefined;
      /** Desktop notifications for this project, when its `pulse start` asked (else the daemon's own). */
      notify?: ProjectOptions['notify'];
    }) {
      const paths = pulsePaths(root);
      const id = projectId(paths.projectRoot);
      if (actor.getSnapshot().status !== 'active')
        throw new ProjectRefusedError('This pulse is shutting down: start it again in a moment.');
      const servedNow = opened.get(id);
      if (servedNow !== undefined || opening.has(id)) {
        throw new ProjectRefusedError(
          `pulse is already running for this project (pid ${process.pid})${servedNow ? ` at ${servedNow.url}` : ''}: use it (${pulse(`status -p ${shellWord(paths.projectRoot)}`)}).`,
        );
      }
      opening.add(id);
      // Its URLs are known before it is served (the id is its folder's): a request for one waits, not 404s.
      const giveUp = routes.opening(id);
      try {
        const beside = [...opened.values()];
        const project = await open({
          ...options,
          root,
          logLevel: logLevel ?? options.logLevel,
          notify: notify ?? options.notify,
          onSecrets: (secrets) => openingSecrets.set(id, secrets),
        }).catch((error: Error) => {
          throw new ProjectRefusedError(error.message);
        });
        opened.set(id, project);
        routes.attach({
          id,
          root: project.paths.projectRoot,
          actor: project.actor,
          samplers: project.samplers,
        });
        actor.send({ type: 'project.add', id, root: project.paths.projectRoot });
        const added: AddedProject = {
          id,
          root: project.paths.projectRoot,
          url: project.url,
          summary: summary(project, beside),
        };
        return { project, added };
      } finally {
        giveUp();
        opening.delete(id);
        openingSecrets.delete(id);
      }
    },
    /** Stops serving a project and waits until it is closed; how many are left. */
    async remove(id: string): Promise<{ remaining: number }> {
      if (!served().some((p) => p.id === id)) {
        throw new ProjectRefusedError(`This pulse does not serve a project "${id}".`);
      }
      actor.send({ type: 'project.remove', id });
      await close(id);
      return { remaining: served().length };
    },
  };
};

/** The daemon's projects and how to add and remove them. */
export type ProjectHost = ReturnType<typeof createProjectHost>;
