import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { PulseActor } from '../../machines/pulse.js';
import { answerHook } from '../hooks/answer-hook.js';

/** A hook's input is the agent's event JSON: a prompt or a file's new text can be long, not this long. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * `POST /hook/:agent/:event`: the agent's hook JSON in, the agent's answer out, in one round trip.
 * Claude Code posts here itself (an HTTP hook); command hooks forward their stdin with curl (or
 * `pulse hook`). `?project=` names the project the hook was set up for, `?server=` pulse's MCP
 * server name. Its handlers, the body limit first.
 */
export const createHookRoute = (actor: PulseActor, projectRoot: string) => {
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.text(`pulse: a hook input is at most ${MAX_BODY_BYTES} bytes`, 413),
  });
  return [
    limit,
    async function hook(c: Context) {
      const reply = await answerHook(actor, projectRoot, {
        agent: c.req.param('agent') ?? '',
        event: c.req.param('event') ?? '',
        body: await c.req.text(),
        project: c.req.query('project'),
        server: c.req.query('server'),
      });
      if (reply.status === 404) return c.text(reply.error, 404);
      return c.body(reply.body, 200, { 'content-type': 'application/json' });
    },
  ] as const;
};
