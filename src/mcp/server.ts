import { McpServer } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { PulseActor } from '../../machines/pulse.js';
import { VERSION } from '../package/version.js';
import { registerSamplingClient, type SamplingClients } from '../thinkers/sampling-clients.js';
import { registerAckEvents } from './ack-events.js';
import { registerAckReplan } from './ack-replan.js';
import { registerAgentPresence } from './agent-presence.js';
import { AGENT_RULE } from './agent-rule.js';
import { registerAttentionPrompt } from './attention-prompt.js';
import { type ContextWatch, PUSH_CAPABILITIES, registerContextPush } from './context-push.js';
import { registerContextResource } from './context-resource.js';
import { registerReplanPrompt } from './replan-prompt.js';
import { registerShouldInterrupt } from './should-interrupt.js';

/**
 * One validator for every server: the SDK builds a new Ajv instance per server unless given one,
 * which costs more than the rest of a one-shot call's server. It holds no per-client state. Built
 * at its first use, which pulse never makes (the SDK validates only elicitation answers with it):
 * Ajv with its formats costs the daemon's start-up about a tenth of its CPU time.
 */
let ajv: AjvJsonSchemaValidator | undefined;
type ServerValidator = NonNullable<ConstructorParameters<typeof McpServer>[1]>['jsonSchemaValidator'] & {};
const sharedValidator: ServerValidator = {
  getValidator: (schema) => {
    ajv ??= new AjvJsonSchemaValidator();
    return ajv.getValidator(schema);
  },
};

/**
 * One MCP server bound to the actor system. The SDK binds a server to one transport, so the
 * HTTP layer builds one per session (or per one-shot request); they are cheap. Only a session's
 * server watches the actors, to push context updates and log messages.
 */
export const createMcpServer = ({
  actor,
  watches,
  samplers,
}: {
  actor: PulseActor;
  /** Where the session servers' watches on the actors are held while they last (for `/healthz`). */
  watches?: Set<ContextWatch>;
  /** Where sessions whose client can sample are kept, for `"thinker": "sampling"`. */
  samplers?: SamplingClients;
}): McpServer => {
  const server = new McpServer(
    { name: 'pulse-agent', version: VERSION },
    {
      capabilities: PUSH_CAPABILITIES,
      instructions: AGENT_RULE,
      jsonSchemaValidator: sharedValidator,
    },
  );
  registerContextResource(server, actor);
  registerContextPush(server, actor, watches);
  if (samplers !== undefined) registerSamplingClient(server, samplers);
  registerAgentPresence(server, actor);
  registerShouldInterrupt(server, actor);
  registerAckReplan(server, actor);
  registerAckEvents(server, actor);
  registerReplanPrompt(server);
  registerAttentionPrompt(server);
  return server;
};
