import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { PulseActor } from '../../machines/pulse.js';
import { ackEvents } from '../system/ask-actors.js';
import { announcedMarks } from './announced-caller.js';
import { jsonResult } from './json-result.js';
import { jsonSchemaOnce } from './json-schema-once.js';
import { callerOf, HANDLE_SCHEMA, marksOf } from './should-interrupt.js';
import { ACK_ANNOTATIONS } from './tool-annotations.js';

export const ackEventsOutput = {
  accepted: z.boolean(),
  delivery_id: z.string(),
  reason: z.string(),
  code: z
    .enum(['unknown_delivery', 'already_acknowledged', 'lease_expired', 'not_holder', 'unknown_event'])
    .optional()
    .describe('Why the ack was refused, for programs; absent when accepted.'),
  consumed: z.array(z.string()).describe('Event ids dealt with for good: never delivered again.'),
  put_back: z.array(z.string()).describe('Event ids back in the inbox (outcome later).'),
  dead_lettered: z.array(z.string()).describe('Event ids out of attempts, moved to the dead letters.'),
};

const ackEventsInputSchema = z.object({
  delivery_id: z.string(),
  outcomes: z.record(z.string(), z.enum(['told', 'not_worth_saying', 'later'])).optional(),
  agent: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('The agent name given to pulse_should_interrupt, when it was called without a session.'),
  handle: HANDLE_SCHEMA.optional().describe(
    'The agent_handle pulse_should_interrupt answered, when it was called without a session.',
  ),
});
const ackEventsOutputSchema = z.object(ackEventsOutput);

export const registerAckEvents = (server: McpServer, actor: PulseActor): void => {
  server.registerTool(
    'pulse_ack_events',
    {
      description:
        'Acknowledge a delivery of external events from pulse_should_interrupt. outcomes per event id: told, not_worth_saying, or later (deliver again); an event left out counts as told. Only the agent that received the delivery may acknowledge it: from the same MCP session, or with the same handle or agent name.',
      inputSchema: jsonSchemaOnce(ackEventsInputSchema),
      outputSchema: jsonSchemaOnce(ackEventsOutputSchema),
      annotations: ACK_ANNOTATIONS,
    },
    async ({ delivery_id, outcomes, agent, handle }, ctx) => {
      const caller = callerOf(announcedMarks(actor, 'pulse_ack_events', marksOf(ctx, { handle, agent })));
      const reply = await ackEvents(actor, delivery_id, outcomes, caller);
      return jsonResult({
        accepted: reply.accepted,
        delivery_id: reply.deliveryId,
        reason: reply.reason,
        ...(reply.code === undefined ? {} : { code: reply.code }),
        consumed: reply.consumed,
        put_back: reply.putBack,
        dead_lettered: reply.deadLettered,
      });
    },
  );
};
