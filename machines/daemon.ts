import { assign, type EventObject, enqueueActions, fromCallback, setup, stopChild } from 'xstate';
import { type DaemonContext, type DaemonEvent, projectSystemId, type ServedEntry } from './daemon-context.js';

/**
 * The daemon: the set of projects one process serves. Each is a child actor (`project`, provided
 * by the wiring) whose life is that project's own actor system: stopped, it closes the system. The
 * daemon is done once the last project is removed.
 */
export const daemonMachine = setup({
  types: {
    context: {} as DaemonContext,
    events: {} as DaemonEvent,
  },
  actors: {
    project: fromCallback<EventObject, ServedEntry>(() => {
      throw new Error('project not provided');
    }),
  },
  guards: {
    /** The project is not served yet (an id is served once). */
    isNewProject: ({ context }, params: { id: string }) => !context.projects.some((p) => p.id === params.id),
    /** The project is served and no other is. */
    isLastProject: ({ context }, params: { id: string }) =>
      context.projects.length === 1 && context.projects[0]!.id === params.id,
    /** The project is served. */
    isServed: ({ context }, params: { id: string }) => context.projects.some((p) => p.id === params.id),
  },
  actions: {
    /** Adds the project to the served set. */
    recordProject: assign(({ context }, params: ServedEntry) => ({
      projects: [...context.projects, params],
    })),
    /** Starts the project's child actor under its system id. */
    startProject: enqueueActions(({ enqueue }, params: ServedEntry) => {
      enqueue.spawnChild('project', { id: params.id, systemId: projectSystemId(params.id), input: params });
    }),
    /** Stops the project's child actor, which closes its system. */
    stopProject: stopChild((_, params: { id: string }) => params.id),
    /** Takes the project out of the served set. */
    forgetProject: assign(({ context }, params: { id: string }) => ({
      projects: context.projects.filter((p) => p.id !== params.id),
    })),
  },
}).createMachine({
  id: 'daemon',
  context: { projects: [] },
  initial: 'starting',
  states: {
    starting: {
      description: 'No project yet: the first is being added.',
      on: {
        'project.add': {
          guard: { type: 'isNewProject', params: ({ event }) => ({ id: event.id }) },
          target: 'serving',
          actions: [
            { type: 'recordProject', params: ({ event }) => ({ id: event.id, root: event.root }) },
            { type: 'startProject', params: ({ event }) => ({ id: event.id, root: event.root }) },
          ],
        },
      },
    },
    serving: {
      description: 'Serving one project or more; removing the last ends the daemon.',
      on: {
        'project.add': {
          guard: { type: 'isNewProject', params: ({ event }) => ({ id: event.id }) },
          actions: [
            { type: 'recordProject', params: ({ event }) => ({ id: event.id, root: event.root }) },
            { type: 'startProject', params: ({ event }) => ({ id: event.id, root: event.root }) },
          ],
        },
        'project.remove': [
          {
            guard: { type: 'isLastProject', params: ({ event }) => ({ id: event.id }) },
            target: 'ended',
            actions: [
              { type: 'stopProject', params: ({ event }) => ({ id: event.id }) },
              { type: 'forgetProject', params: ({ event }) => ({ id: event.id }) },
            ],
          },
          {
            guard: { type: 'isServed', params: ({ event }) => ({ id: event.id }) },
            actions: [
              { type: 'stopProject', params: ({ event }) => ({ id: event.id }) },
              { type: 'forgetProject', params: ({ event }) => ({ id: event.id }) },
            ],
          },
        ],
      },
    },
    ended: { description: 'It serves no project: the process exits.', type: 'final' },
  },
});
