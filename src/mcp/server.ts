import { McpServer, type ServerNotifier } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { PulseActor } from '../../machines/pulse.js';
import { VERSION } from '../package/version.js';
import { registerSamplingClient, type SamplingClients } from '../thinkers/sampling-clients.js';
import { registerAckEvents } from './ack-events.js';
import { registerAckReplan } from './ack-replan.js';
import { registerAgentPresence } from './agent-presence.js';
import { AGENT_RULE } from './agent-rule.js';
import { registerAttentionPrompt } from './attention-prompt.js';
import { type ContextWatch, PUSH_CAPABILITIES, registerContextPush, watchContext } from './context-push.js';
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
 * What a 2026-07-28 server advertises: per-resource updates reach `subscriptions/listen` streams
 * only from a server that says it can subscribe. No logging: that revision deprecates it, and
 * pulse has nothing to log to a caller within one request.
 */
const MODERN_CAPABILITIES = { resources: { subscribe: true } } as const;

/**
 * One MCP server bound to the actor system. The SDK binds a server to one transport, so the
 * HTTP layer builds one per session, one-shot request or 2026-07-28 request; they are cheap (the
 * validator and the tools' schemas are shared). Only a 2025-era session's server watches the
 * actors, to push context updates and log messages; 2026 listeners hear from the project's one
 * watch (`watchForListeners`).
 */
export const createMcpServer = ({
  actor,
  watches,
  samplers,
  era = 'legacy',
}: {
  actor: PulseActor;
  /** Where the session servers' watches on the actors are held while they last (for `/healthz`). */
  watches?: Set<ContextWatch>;
  /** Where sessions whose client can sample are kept, for `"thinker": "sampling"`. */
  samplers?: SamplingClients;
  /** The protocol era the server answers: a 2026-07-28 one has no session, push or sampling. */
  era?: 'legacy' | 'modern';
}): McpServer => {
  const server = new McpServer(
    { name: 'pulse-agent', version: VERSION },
    {
      capabilities: era === 'modern' ? MODERN_CAPABILITIES : PUSH_CAPABILITIES,
      instructions: AGENT_RULE,
      jsonSchemaValidator: sharedValidator,
    },
  );
  registerContextResource(server, actor);
  if (era === 'legacy') {
    registerContextPush(server, actor, watches);
    if (samplers !== undefined) registerSamplingClient(server, samplers);
    registerAgentPresence(server, actor);
  }
  registerShouldInterrupt(server, actor);
  registerAckReplan(server, actor);
  registerAckEvents(server, actor);
  registerReplanPrompt(server);
  registerAttentionPrompt(server);
  return server;
};

/**
 * The one watch on a project's actors that tells its 2026-07-28 listeners (`subscriptions/listen`)
 * when the context changed, held in `watches` while it lasts; returns its stop. Replan warnings
 * and delivery notices are not sent: that revision has no log push, and the context says both.
 */
export const watchForListeners = (
  actor: PulseActor,
  notify: Pick<ServerNotifier, 'resourceUpdated'>,
  watches: Set<ContextWatch> = new Set(),
): (() => void) => {
  const watch = watchContext(actor, {
    resourceUpdated: (uri) => notify.resourceUpdated(uri),
    log: () => undefined,
  });
  watch.subscribe();
  watches.add(watch);
  return () => {
    watch.stop();
    watches.delete(watch);
  };
};
