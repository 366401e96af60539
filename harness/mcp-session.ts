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
