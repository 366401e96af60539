import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { PulseActor } from '../../machines/pulse.js';
import { answerHook } from '../hooks/answer-hook.js';
import { HOOK_AGENTS, isHookAgent, phaseOf } from '../hooks/events.js';
import { parseHookInput } from '../hooks/hook-input.js';
import { letBeSaying, notEnforcing } from '../hooks/hook-output.js';
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
  agent: string,
  event: string,
  body: string,
  named: string | undefined,
): P | undefined => {
  if (named !== undefined) return projectNamed(projects, named);
  if (isHookAgent(agent)) {
    const parsed = parseHookInput(agent, event, body);
    const cwd = 'call' in parsed ? parsed.call.cwd : null;
    const around = cwd === null ? undefined : projectAround(projects, cwd);
    if (around !== undefined) return around;
  }
  return projects.length === 1 ? projects[0] : undefined;
};

const noHook = (c: Context, agent: string, event: string) =>
  c.text(`No hook "${agent}/${event}": pulse answers ${HOOK_AGENTS.join(', ')}.`, 404);

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
      const agent = c.req.param('agent') ?? '';
      const event = c.req.param('event') ?? '';
      const phase = isHookAgent(agent) ? phaseOf(agent, event) : undefined;
      if (!isHookAgent(agent) || phase === undefined) return noHook(c, agent, event);
      // The input's cwd is unread: held when the named project holds, or with no name any project served.
      const named = c.req.query('project');
      const served = projects();
      const one = named === undefined ? undefined : projectNamed(served, named);
      const actors = (named === undefined ? served : one === undefined ? [] : [one]).map((p) => p.actor);
      return c.body(await answerUnreadHook(actors, { agent, event, phase }, MAX_BODY_BYTES), 200, {
        'content-type': 'application/json',
      });
    },
  });
  return [
    limit,
    async function hook(c: Context) {
      const agent = c.req.param('agent') ?? '';
      const event = c.req.param('event') ?? '';
      const body = await c.req.text();
      const named = c.req.query('project');
      const served = projects();
      const project = hookProject(served, agent, event, body, named);
      if (project === undefined) {
        const phase = isHookAgent(agent) ? phaseOf(agent, event) : undefined;
        if (!isHookAgent(agent) || phase === undefined) return noHook(c, agent, event);
        const parsed = isHookAgent(agent) ? parseHookInput(agent, event, body) : null;
        const cwd = parsed !== null && 'call' in parsed ? parsed.call.cwd : null;
        const why = `the daemon on this port serves ${served.map((p) => p.root).join(', ') || 'no project'}, not ${named ?? cwd ?? 'this folder'}`;
        return c.body(letBeSaying(agent, event, phase, notEnforcing(why)), 200, {
          'content-type': 'application/json',
        });
      }
      const reply = await answerHook(project.actor, project.root, {
        agent,
        event,
        body,
        project: named,
        server: c.req.query('server'),
      });
      if (reply.status === 404) return c.text(reply.error, 404);
      return c.body(reply.body, 200, { 'content-type': 'application/json' });
    },
  ] as const;
};
