import type { McpServer } from '@modelcontextprotocol/server';

/** PulseAgent's prompt text, unchanged. */
export const REPLAN_PROMPT =
  'Before continuing, read pulse://context/latest and call pulse_should_interrupt with your last seen event id. If needs_replan is true, pause implementation, summarize the changed guidance or constraints, update your plan, call pulse_ack_replan with pending_replan_event_id, then continue only under the latest PulseAgent context.';

export const registerReplanPrompt = (server: McpServer): void => {
  server.registerPrompt(
    'pulse_replan',
    { description: 'Prompt an agent to replan using the latest PulseAgent context.' },
    () => ({ messages: [{ role: 'user', content: { type: 'text', text: REPLAN_PROMPT } }] }),
  );
};
