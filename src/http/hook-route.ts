import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { HOOK_EVENTS, type HookAgent } from '../hooks/events.js';
import type { HookAnswer } from '../hooks/hook-answer.js';
import { headline } from '../mcp/external-section.js';
import { gateOf, reconcile, replanOf } from '../requests.js';
import type { PulseActor } from '../wiring.js';

/** A hook answers within its agent's tool call: it waits this long, at most, for the files to be scanned. */
const RECONCILE_BUDGET_MS = 150;
/** A question is a few short fields. */
const MAX_BODY_BYTES = 16 * 1024;
/** Hook sessions remembered for announcements; past this the oldest is forgotten (and may hear it again). */
const SESSIONS_KEPT = 1000;

const hookQuestion = z
  .object({
    agent: z.enum(Object.keys(HOOK_EVENTS) as [HookAgent, ...HookAgent[]]),
    event: z.string(),
    session: z.string().min(1).max(200),
    announce: z.boolean(),
  })
  .strict()
  .superRefine(({ agent, event }, ctx) => {
    const events: readonly string[] = HOOK_EVENTS[agent];
    if (!events.includes(event)) {
      ctx.addIssue({
        code: 'custom',
        path: ['event'],
        message: `"${event}" is not a ${agent} hook event pulse answers; expected one of ${events.join(', ')}.`,
      });
    }
  });

/**
 * Which delivery each hook session was last told of, so a delivery is announced once per session
 * and not on every tool call. Memory is enough: after a restart a session hears of it once more.
 */
const createAnnouncements = (limit: number) => {
  const told = new Map<string, string>();
  return {
    /** True the first time this session meets this delivery; remembers it. */
    isNews(session: string, deliveryId: string): boolean {
      if (told.get(session) === deliveryId) return false;
      told.delete(session);
      told.set(session, deliveryId);
      if (told.size > limit) told.delete(told.keys().next().value!);
      return true;
    },
  };
};

/** Read-your-writes for hooks, bounded: a guidance edit saved just before this tool call is seen. */
const reconcileWithin = async (actor: PulseActor, ms: number): Promise<void> => {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    reconcile(actor).catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
};

/**
 * `POST /hook`: what `pulse hook` needs in one round trip: the pending replan and, when the hook
 * can pass it on, a delivery this agent session has not been told of yet. Sends only `log.reconcile`;
 * everything else is read from snapshots. Its handlers, the body limit first.
 */
export const createHookRoute = (actor: PulseActor, projectRoot: string) => {
  const announcements = createAnnouncements(SESSIONS_KEPT);
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ error: `A hook question is at most ${MAX_BODY_BYTES} bytes.` }, 413),
  });
  return [
    limit,
    async function hook(c: Context) {
      const body = await c.req.json().catch(() => undefined);
      if (body === undefined)
        return c.json({ error: 'The body must be JSON: {agent, event, session, announce}.' }, 400);
      const parsed = hookQuestion.safeParse(body);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
        return c.json({ error: `Bad hook question. ${problems.join('; ')}` }, 400);
      }
      const { agent, session, announce } = parsed.data;
      await reconcileWithin(actor, RECONCILE_BUDGET_MS);
      const replan = replanOf(actor).getSnapshot().context;
      const delivery = gateOf(actor).getSnapshot().context.delivery;
      const answer: HookAnswer = {
        project: projectRoot,
        pending:
          replan.pendingEventId === null
            ? null
            : { event_id: replan.pendingEventId, files: replan.pendingFiles },
        attention:
          announce && delivery !== null && announcements.isNews(`${agent}:${session}`, delivery.deliveryId)
            ? { delivery_id: delivery.deliveryId, headlines: delivery.events.map(headline) }
            : null,
      };
      return c.json(answer);
    },
  ] as const;
};
