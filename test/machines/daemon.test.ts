import { describe, expect, it } from 'vitest';
import { createActor, fromCallback } from 'xstate';
import { daemonMachine } from '../../machines/daemon.js';
import { projectSystemId } from '../../machines/daemon-context.js';

/** The daemon with a `project` child that records when it starts and stops. */
const daemon = () => {
  const log: string[] = [];
  const actor = createActor(
    daemonMachine.provide({
      actors: {
        project: fromCallback<{ type: string }, { id: string; root: string }>(({ input }) => {
          log.push(`start ${input.id}`);
          return () => log.push(`stop ${input.id}`);
        }),
      },
    }),
  ).start();
  return { actor, log };
};

describe('daemonMachine', () => {
  it('runs one project child per project under project:<id>, and each project once', () => {
    const { actor, log } = daemon();
    actor.send({ type: 'project.add', id: 'a', root: '/a' });
    actor.send({ type: 'project.add', id: 'b', root: '/b' });
    actor.send({ type: 'project.add', id: 'a', root: '/a' });
    expect(actor.getSnapshot().context.projects.map((p) => p.id)).toEqual(['a', 'b']);
    expect(log).toEqual(['start a', 'start b']);
    expect(actor.system.get(projectSystemId('b'))).toBeDefined();
  });

  it('stops a removed project and goes on serving the others; ends after the last', () => {
    const { actor, log } = daemon();
    actor.send({ type: 'project.add', id: 'a', root: '/a' });
    actor.send({ type: 'project.add', id: 'b', root: '/b' });
    actor.send({ type: 'project.remove', id: 'a' });
    expect(actor.getSnapshot().value).toBe('serving');
    expect(actor.system.get(projectSystemId('a'))).toBeUndefined();
    actor.send({ type: 'project.remove', id: 'zzz' });
    expect(actor.getSnapshot().value).toBe('serving');
    actor.send({ type: 'project.remove', id: 'b' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(log).toEqual(['start a', 'start b', 'stop a', 'stop b']);
  });
});
