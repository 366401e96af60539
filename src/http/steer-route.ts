import { join } from 'node:path';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { PulseActor } from '../../machines/pulse.js';
import type { SteerFile, SteerMode, SteerSource } from '../../machines/steer-context.js';
import { readBoundedText } from '../store/read-bounded.js';
import { STEER_LIMIT, steerPath } from '../store/steer-file.js';
import { PulseUnavailableError } from '../system/actors.js';
import { askSteer, SteerRefusedError } from '../system/ask-actors.js';
import { type HttpFacts, systemStatus } from '../system/read-status.js';
import type { ReplanAgentStatus } from '../system/system-status.js';
import { isLoopbackHost, STEER_TOKEN_HEADER } from './auth.js';
import { CLI_HEADER } from './projects-route.js';

/** A steer request is the text and two words: JSON escaping may double the text's bytes, hardly more. */
const MAX_BODY_BYTES = 4 * STEER_LIMIT;

const USAGE =
  'Send JSON: {"file": "guidance" or "constraints", "text": "<what the agents should know>", "mode": "replace" or "append"}.';

const requestSchema = z.object({
  file: z.enum(['guidance', 'constraints']),
  text: z.string(),
  mode: z.enum(['replace', 'append']).default('replace'),
});

/** The body limit of `POST /steer`, before any project is looked up. */
export const steerLimit = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: (c) =>
    c.json(
      {
        error: `The request is over ${MAX_BODY_BYTES} bytes: guidance and constraints hold at most ${STEER_LIMIT / 1024} KiB, what agents read whole. Say it shorter.`,
      },
      413,
    ),
});

/** What a steer write answers: what the file holds now, the event pulse logged for it, and who owes that event an ack. */
export interface SteerAnswer {
  project: string;
  project_id: string;
  file: SteerFile;
  path: string;
  mode: SteerMode;
  changed: boolean;
  sha256: string;
  size: number;
  /** The event pulse logged for exactly this text; null when nothing changed, or another edit came first. */
  event_id: string | null;
  /** The agents that owe that event (or a later one) an ack now. */
  owing: ReplanAgentStatus[];
  /** Whether the project is in a fleet: the other members' agents owe it too. */
  fleet?: boolean;
  /** What it means, in a sentence. */
  note: string;
}

/**
 * Who may write: the pulse CLI on this machine (no `Origin`, our header), or pulse's own status
 * page: a loopback peer whose `Origin` is exactly the origin it is served from (another localhost
 * port is another origin) and which sends the token that page was served with. A refusal says
 * why; null lets the request through. The host guard and the daemon's token have run before.
 */
const refusal = (c: Context, steerToken: (candidate: string | undefined) => boolean): Response | null => {
  const origin = c.req.header('origin');
  if (origin === undefined && c.req.header(CLI_HEADER) === '1') return null;
  const own = new URL(c.req.url).origin;
  if (origin !== undefined && origin !== own)
    return c.json(
      {
        error: `Only pulse's own status page (${own}) may change guidance or constraints; this request came from a page at ${origin}.`,
      },
      403,
    );
  // A fetch of the same origin sends no Origin with a GET; the token proves the page is ours.
  if (origin === undefined && c.req.method !== 'GET')
    return c.json(
      { error: `Only pulse's own status page or the pulse CLI may change guidance or constraints.` },
      403,
    );
  const peer = getConnInfo(c).remote.address;
  if (peer === undefined || !isLoopbackHost(peer))
    return c.json({ error: 'The status page steers from this machine only.' }, 403);
  if (!steerToken(c.req.header(STEER_TOKEN_HEADER)))
    return c.json(
      {
        error:
          "The request does not carry this status page's token: reload the page (pulse may have restarted).",
      },
      403,
    );
  return null;
};

const noteOf = (answer: Omit<SteerAnswer, 'note'>): string => {
  const path = answer.path;
  if (!answer.changed) return `${path} already says that: nothing changed, and no agent owes anything new.`;
  if (answer.event_id === null)
    return `${path} was written, but another edit changed it again before pulse logged this text: see the latest event in pulse status.`;
  if (answer.owing.length === 0)
    return `No agent is working in the project now: the next one to come owes ${answer.event_id} and is held until it replans.`;
  const n = answer.owing.length;
  return `${n === 1 ? '1 agent' : `${n} agents`} must now replan and acknowledge ${answer.event_id}; each is held at its next tool call until it has.`;
};

/**
 * `POST /steer` writes guidance or constraints through the project's steer actor and answers with
 * the event logged for exactly that text and the agents that now owe it an ack; `GET
 * /steer?file=guidance` gives the file's current text (for the page's editor). Both for the pulse
 * CLI and pulse's own status page only (see `refusal`).
 */
export const createSteerRoute = ({
  project,
  facts,
  steerToken,
}: {
  project: { id: string; root: string; actor: PulseActor };
  /** What the HTTP layer knows beside the actors (sessions), for the status it reads. */
  facts: () => HttpFacts;
  steerToken: (candidate: string | undefined) => boolean;
}) => {
  const write = async (c: Context) => {
    const refused = refusal(c, steerToken);
    if (refused !== null) return refused;
    const body = requestSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!body.success) return c.json({ error: `The request is not a steer. ${USAGE}` }, 400);
    const by: SteerSource = c.req.header('origin') === undefined ? 'cli' : 'page';
    try {
      const { written, eventId } = await askSteer(project.actor, { ...body.data, by });
      const status = systemStatus(project.actor, facts());
      const owing = status.replan.agents.filter(
        (agent) => eventId !== null && agent.owes !== null && agent.owes >= eventId,
      );
      const answer = {
        project: project.root,
        project_id: project.id,
        file: body.data.file,
        path: written.path,
        mode: body.data.mode,
        changed: written.changed,
        sha256: written.sha256,
        size: written.size,
        event_id: eventId,
        owing,
        ...(status.fleet !== undefined && status.fleet.refused === null ? { fleet: true } : {}),
      };
      return c.json({ ...answer, note: noteOf(answer) } satisfies SteerAnswer, 200);
    } catch (error) {
      if (error instanceof SteerRefusedError) return c.json({ error: error.message }, 409);
      if (error instanceof PulseUnavailableError) return c.json({ error: error.message }, 503);
      throw error;
    }
  };
  const read = async (c: Context) => {
    const refused = refusal(c, steerToken);
    if (refused !== null) return refused;
    const file = z.enum(['guidance', 'constraints']).safeParse(c.req.query('file'));
    if (!file.success) return c.json({ error: 'Ask for ?file=guidance or ?file=constraints.' }, 400);
    try {
      const text = await readBoundedText(steerPath(join(project.root, '.pulse'), file.data), STEER_LIMIT);
      return c.json({ file: file.data, text: text ?? '' }, 200);
    } catch (error) {
      return c.json({ error: `.pulse/${file.data}.md cannot be read: ${(error as Error).message}` }, 409);
    }
  };
  return { write, read };
};
