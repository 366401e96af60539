import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { VERSION } from '../version.js';
import type { PulseActor } from '../wiring.js';
import { registerAckEvents } from './ack-events.js';
import { registerAckReplan } from './ack-replan.js';
import { AGENT_RULE } from './agent-rule.js';
import { registerAttentionPrompt } from './attention-prompt.js';
import { registerContextResource } from './context-resource.js';
import { registerReplanPrompt } from './replan-prompt.js';
import { registerShouldInterrupt } from './should-interrupt.js';

/**
 * One MCP server bound to the actor system. The SDK binds a server to one transport, so the
 * HTTP layer builds one per session (or per one-shot request); they are cheap.
 */
export const createMcpServer = ({ actor }: { actor: PulseActor }): McpServer => {
  const server = new McpServer(
    { name: 'pulse-agent', version: VERSION },
    {
      instructions: AGENT_RULE,
    },
  );
  registerContextResource(server, actor);
  registerShouldInterrupt(server, actor);
  registerAckReplan(server, actor);
  registerAckEvents(server, actor);
  registerReplanPrompt(server);
  registerAttentionPrompt(server);
  return server;
};
