import type { McpServer } from '@modelcontextprotocol/server';

type Protocol = McpServer['server'];

/** A session whose client declared `sampling`: pulse may ask its model to judge events. */
export interface Sampler {
  /** The client's name, from its `initialize`. */
  client: string;
  createMessage: Protocol['createMessage'];
}

/**
 * The MCP sessions that can sample, most recent last. Read by the sampling thinker at each
 * thought; a session leaves when its transport closes.
 */
export class SamplingClients {
  readonly #samplers = new Set<Sampler>();

  add(sampler: Sampler): void {
    this.#samplers.add(sampler);
  }

  delete(sampler: Sampler): void {
    this.#samplers.delete(sampler);
  }

  /** The session that most recently declared sampling, or null when none is connected. */
  latest(): Sampler | null {
    return [...this.#samplers].at(-1) ?? null;
  }

  get size(): number {
    return this.#samplers.size;
  }
}

/**
 * Adds a session's server to `clients` once its client has initialized with the `sampling`
 * capability, and removes it when the transport closes. Chains the handlers set before it
 * (the context push's), so it is registered after them. A one-shot server has no session to
 * send a request back on, and is never added.
 */
export const registerSamplingClient = (server: McpServer, clients: SamplingClients): void => {
  const protocol = server.server;
  const initialized = protocol.oninitialized;
  const closed = protocol.onclose;
  let sampler: Sampler | null = null;
  protocol.oninitialized = () => {
    initialized?.();
    if (protocol.transport?.sessionId === undefined) return;
    if (protocol.getClientCapabilities()?.sampling === undefined) return;
    sampler = {
      client: protocol.getClientVersion()?.name ?? 'an MCP client',
      createMessage: protocol.createMessage.bind(protocol) as Protocol['createMessage'],
    };
    clients.add(sampler);
  };
  protocol.onclose = () => {
    closed?.();
    if (sampler !== null) clients.delete(sampler);
    sampler = null;
  };
};
