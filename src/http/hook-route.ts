import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { PulseActor } from '../../machines/pulse.js';
import { answerHook } from '../hooks/answer-hook.js';
import { parseHookInput } from '../hooks/hook-input.js';
import { letBeSaying, notEnforcing } from '../hooks/hook-output.js';
import { hookTarget, notServed } from '../hooks/hook-refusals.js';
import { answerUnreadHook } from '../hooks/unread-hook.js';
import { type ProjectKey, projectAround, projectNamed } from './project-lookup.js';

/** A hook's input is the agent's event JSON: a prompt or a file's new text can be long, not this long. */
const MAX_BODY_BYTES = 1024 * 1024;

/** A served project as the hook route needs it: where it is and its actors. */
export interface HookProject extends ProjectKey {
  actor: PulseActor;
}

/** The project a hook is for: `?project=`, else the one its input's cwd lies in, else the only one. */
const hookProject = <P extends HookProject>(
  projects: readonly P[],
  named: string | undefined,
  cwd: string | null,
): P | undefined => {
  if (named !== undefined) return projectNamed(projects, named);
  const around = cwd === null ? undefined : projectAround(projects, cwd);
  return around ?? (projects.length === 1 ? projects[0] : undefined);
};

const json = (c: Context, body: string) => c.body(body, 200, { 'content-type': 'application/json' });

/**
 * `POST /hook/:agent/:event`: the agent's hook JSON in, the agent's answer out, in one round trip.
 * Claude Code posts here itself (an HTTP hook); command hooks forward their stdin with curl (or
 * `pulse hook`). `?project=` names the project the hook was set up for (its input's `cwd` when
 * absent), `?server=` pulse's MCP server name; a project this daemon does not serve fails open.
 * Its handlers, the body limit first: an input over it is answered unread (`answerUnreadHook`).
 */
export const createHookRoute = (projects: () => readonly HookProject[]) => {
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    // Answered, not refused: a hook that gets no answer lets the call run.
    onError: async (c) => {
      const target = hookTarget(c.req.param('agent') ?? '', c.req.param('event') ?? '');
      if ('refusal' in target) return c.text(target.refusal, 404);
      // The input's cwd is unread: held when the named project holds, or with no name any project served.
      const named = c.req.query('project');
      const served = projects();
      const one = named === undefined ? undefined : projectNamed(served, named);
      const actors = (named === undefined ? served : one === undefined ? [] : [one]).map((p) => p.actor);
      return json(c, await answerUnreadHook(actors, target, MAX_BODY_BYTES));
    },
  });
  return [
    limit,
    async function hook(c: Context) {
      const target = hookTarget(c.req.param('agent') ?? '', c.req.param('event') ?? '');
      if ('refusal' in target) return c.text(target.refusal, 404);
      const { agent, event, phase } = target;
      const parsed = parseHookInput(agent, event, await c.req.text());
      const named = c.req.query('project');
      const served = projects();
      const cwd = 'call' in parsed ? parsed.call.cwd : null;
      const project = hookProject(served, named, cwd);
      // A hook pulse cannot judge lets the call be, saying why on the agent's screen.
      const letBeFor = (why: string) => json(c, letBeSaying(agent, event, phase, notEnforcing(why)));
      if (project === undefined)
        return letBeFor(
          notServed(
            served.map((p) => p.root),
            named ?? cwd ?? 'this folder',
          ),
        );
      if ('problem' in parsed) return letBeFor(parsed.problem);
      return json(c, await answerHook(project.actor, project.root, parsed.call, c.req.query('server')));
    },
  ] as const;
};
