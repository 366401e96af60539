import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { PulseActor } from '../../machines/pulse.js';
import { PulseUnavailableError } from '../system/actors.js';
import { askSourceTest } from '../system/ask-actors.js';

/** A request names one source: a few hundred bytes. */
const MAX_BODY_BYTES = 16 * 1024;

const requestSchema = z.object({ source: z.string().min(1), raw: z.boolean().default(false) });

const USAGE = 'Send a JSON object: {"source": "<name in sources.json>", "raw": false}.';

/** Unknown source: 404; sources.json not trusted (a test would start its server): 403; at capacity: 429. */
const REFUSED_STATUS = { unknown: 404, untrusted: 403, busy: 429 } as const;

/** The body limit of `POST /sources/test`, before any project is looked up. */
export const sourcesTestLimit = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: (c) => c.json({ error: `The request is over ${MAX_BODY_BYTES} bytes. ${USAGE}` }, 413),
});

/**
 * `POST /sources/test`: tests one source now, through the daemon's own clients and environment
 * (what `pulse sources test` asks). 200 with the result, also when the poll failed; 404 for a
 * source the daemon does not know; 403 while sources.json is not trusted; 429 while tests are running at capacity.
 */
export const createSourcesTestRoute = (actor: PulseActor) => {
  return [
    sourcesTestLimit,
    async function sourcesTest(c: Context) {
      const body = requestSchema.safeParse(await c.req.json().catch(() => undefined));
      if (!body.success) return c.json({ error: `The request is not a source test. ${USAGE}` }, 400);
      try {
        const reply = await askSourceTest(actor, body.data.source, body.data.raw);
        if ('result' in reply) return c.json(reply.result, 200);
        return c.json({ error: reply.error }, REFUSED_STATUS[reply.refused]);
      } catch (error) {
        if (error instanceof PulseUnavailableError) return c.json({ error: error.message }, 504);
        throw error;
      }
    },
  ] as const;
};
