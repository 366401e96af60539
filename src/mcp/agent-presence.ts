import type { McpServer } from '@modelcontextprotocol/server';
import { sessionParty } from '../../machines/agent-identity.js';
import type { PulseActor } from '../../machines/pulse.js';
import { hearAgent, replanOf } from '../system/ask-actors.js';

/**
 * A session's agent is working in the project from its client's `initialized` until its
 * transport closes (the client ended it, it expired, or it was evicted), known by the `clientInfo`
 * it sent (named so in status and notifications): a change made meanwhile
 * waits for its ack, and once it closes it is no longer waited for. Chains the handlers set before it.
 */
export const registerAgentPresence = (server: McpServer, actor: PulseActor): void => {
  const protocol = server.server;
  const initialized = protocol.oninitialized;
  const closed = protocol.onclose;
  let party: string | null = null;
  protocol.oninitialized = () => {
    initialized?.();
    const sessionId = protocol.transport?.sessionId;
    if (sessionId === undefined) return;
    party = sessionParty(sessionId);
    const client = protocol.getClientVersion();
    const revision = protocol.getNegotiatedProtocolVersion();
    hearAgent(
      actor,
      party,
      true,
      client && {
        name: client.name,
        version: client.version,
        ...(revision === undefined ? {} : { protocol: revision }),
      },
    );
  };
  protocol.onclose = () => {
    closed?.();
    if (party !== null) replanOf(actor).send({ type: 'agent.left', party });
    party = null;
  };
};
