import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { needsHandle, ONE_SHOT } from '../../machines/agent-identity.js';
import type { PulseActor } from '../../machines/pulse.js';
import { ackReplan } from '../system/ask-actors.js';
import { announcedMarks } from './announced-caller.js';
import { jsonResult } from './json-result.js';
import { jsonSchemaOnce } from './json-schema-once.js';
import { HANDLE_SCHEMA, marksOf, replanPartyOf } from './should-interrupt.js';
import { ACK_ANNOTATIONS } from './tool-annotations.js';

export const ackOutput = {
  accepted: z.boolean(),
  acknowledged_event_id: z.string().nullable(),
  plan_sha256: z.string().nullable(),
  reason: z.string(),
  code: z
    .enum([
      'missing_event_id',
      'unknown_event',
      'not_invalidating',
      'no_pending_replan',
      'stale_event',
      'missing_handle',
    ])
    .optional()
    .describe('Why the ack was refused, for programs; absent when accepted.'),
  durable: z
    .boolean()
    .optional()
    .describe(
      'With an accepted ack: true once it is in .pulse/state.json; false while pulse holds it in memory only (a full disk), see warning.',
    ),
  warning: z
    .string()
    .optional()
    .describe('Why an accepted ack is not durable yet, and what pulse does about it.'),
  plan_changed: z
    .boolean()
    .optional()
    .describe(
      'With an accepted ack: whether .pulse/plan.md changed since this agent began to owe the change. An ack with the plan unchanged is accepted, and the user is told so.',
    ),
  plan_change: z
    .string()
    .optional()
    .describe('With an accepted ack: what became of the plan, in words, as the user sees it.'),
  agent_id: z
    .string()
    .describe(
      'Who pulse took the caller for: the ack frees this agent only; every other agent acknowledges for itself.',
    ),
};

const ackInputSchema = z.object({
  event_id: z.string(),
  agent: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'The agent name a one-shot caller passed to pulse_should_interrupt, or the hook session a held tool call gave ("claude:<session>").',
    ),
  handle: HANDLE_SCHEMA.optional().describe(
    'The agent_handle pulse_should_interrupt answered, for a client without MCP sessions: the ack frees that agent only.',
  ),
});
const ackOutputSchema = z.object(ackOutput);

const MISSING_HANDLE: z.infer<typeof ackOutputSchema> = {
  accepted: false,
  acknowledged_event_id: null,
  plan_sha256: null,
  reason:
    'This client speaks MCP 2026-07-28, which has no sessions, and no hook of this agent announced the call: pass the agent_handle pulse_should_interrupt answered as handle, so the ack frees this agent alone.',
  code: 'missing_handle',
  agent_id: ONE_SHOT,
};

export const registerAckReplan = (server: McpServer, actor: PulseActor): void => {
  server.registerTool(
    'pulse_ack_replan',
    {
      description:
        'Acknowledge that this agent replanned for the latest guidance or constraints event. Pass pending_replan_event_id from pulse_should_interrupt, after updating .pulse/plan.md. Each agent acknowledges for itself.',
      inputSchema: jsonSchemaOnce(ackInputSchema),
      outputSchema: jsonSchemaOnce(ackOutputSchema),
      annotations: ACK_ANNOTATIONS,
    },
    async ({ event_id, agent, handle }, ctx) => {
      const marks = announcedMarks(actor, 'pulse_ack_replan', marksOf(ctx, { handle, agent }));
      // Without its handle a 2026-07-28 caller would ack as the one-shot client, freeing nobody it means.
      if (needsHandle(marks)) return jsonResult(MISSING_HANDLE);
      const party = replanPartyOf(actor, marks);
      const reply = await ackReplan(actor, event_id, party);
      return jsonResult({ ...reply, agent_id: party });
    },
  );
};
