import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { InterruptAnswer } from '../../src/mcp/should-interrupt.js';

/** The MCP revision a modern client pins: no initialize, no session, `server/discover` first. */
export const MODERN_REVISION = '2026-07-28';

/** A session client (initialize, then Mcp-Session-Id), as Claude Code connects on 2025-11-25. */
export const connectSession = async (url: string): Promise<Client> => {
  const client = new Client({ name: 'pulse-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
};

/** The POSTs a client sent, as `fetch` was given them: to replay one without the client. */
export interface SentRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A 2026-07-28 client (`server/discover`, then every request stands alone); rejects when the
 * server does not offer that revision. `sent` receives each POST it makes.
 */
export const connectModern = async (url: string, sent?: SentRequest[]): Promise<Client> => {
  const client = new Client(
    { name: 'pulse-bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN_REVISION } } },
  );
  const recording: typeof fetch = (input, init) => {
    if (sent !== undefined && init?.method === 'POST' && typeof init.body === 'string')
      sent.push({
        url: String(input),
        headers: Object.fromEntries(new Headers(init.headers).entries()),
        body: init.body,
      });
    return fetch(input, init);
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }));
  return client;
};

/** The `agent_handle` each client was answered last, which it passes back as the tool's description asks. */
const handles = new WeakMap<Client, string>();

/**
 * One `pulse_should_interrupt` call; an error result throws. A client without a session (2026-07-28)
 * passes back the handle pulse answered it, as an agent following the tool's description does:
 * without it every call would be a new agent.
 */
export const shouldInterrupt = async (
  client: Client,
  lastSeenEventId: string | null,
): Promise<InterruptAnswer> => {
  const handle = handles.get(client);
  const result = await client.callTool({
    name: 'pulse_should_interrupt',
    arguments: { last_seen_event_id: lastSeenEventId, ...(handle === undefined ? {} : { handle }) },
  });
  if (result.isError) throw new Error(`pulse_should_interrupt failed: ${JSON.stringify(result.content)}`);
  const answer = result.structuredContent as unknown as InterruptAnswer;
  if (typeof answer.agent_handle === 'string') handles.set(client, answer.agent_handle);
  return answer;
};

/**
 * Checks the daemon adopted a generated history as it is: the latest event is the generated
 * one (nothing logged on start) and, seen up to it, nothing is new and no replan is pending.
 */
export const expectAdopted = (answer: InterruptAnswer, latestEventId: string | null): void => {
  const problems: string[] = [];
  if (answer.latest_event_id !== latestEventId)
    problems.push(`latest_event_id is ${answer.latest_event_id}, expected ${latestEventId}`);
  if (answer.has_new_events) problems.push(`has_new_events is true (${answer.changed_files.join(', ')})`);
  if (answer.needs_replan) problems.push(`needs_replan is true (${answer.pending_replan_event_id})`);
  if (problems.length > 0)
    throw new Error(`The daemon did not adopt the history as written: ${problems.join('; ')}.`);
};
