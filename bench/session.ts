import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { InterruptAnswer } from '../src/mcp/should-interrupt.js';

/** A session client (initialize, then Mcp-Session-Id), as Claude Code connects. */
export const connectSession = async (url: string): Promise<Client> => {
  const client = new Client({ name: 'pulse-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
};

/** One `pulse_should_interrupt` call; an error result throws. */
export const shouldInterrupt = async (
  client: Client,
  lastSeenEventId: string | null,
): Promise<InterruptAnswer> => {
  const result = await client.callTool({
    name: 'pulse_should_interrupt',
    arguments: { last_seen_event_id: lastSeenEventId },
  });
  if (result.isError) throw new Error(`pulse_should_interrupt failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as InterruptAnswer;
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

/** What a streamable HTTP client sends on every POST. */
export const MCP_SESSION_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

/**
 * Opens a session the way an agent that is then killed leaves it: `initialize`, then
 * `notifications/initialized` (so it holds a push watch), no stream, never closed. Its id.
 */
export const abandonSession = async (url: string): Promise<string> => {
  const response = await fetch(url, {
    method: 'POST',
    headers: MCP_SESSION_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gone', version: '1' } },
    }),
  });
  await response.text();
  const id = response.headers.get('mcp-session-id');
  if (response.status !== 200 || id === null) throw new Error(`initialize answered ${response.status}`);
  const initialized = await fetch(url, {
    method: 'POST',
    headers: { ...MCP_SESSION_HEADERS, 'mcp-session-id': id },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await initialized.text();
  return id;
};
