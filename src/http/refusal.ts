import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The MCP endpoint, of the daemon or of one project: its clients read JSON-RPC errors. */
const MCP_ROUTE = /^(?:\/p\/[^/]+)?\/mcp$/;

/** A refusal as a JSON-RPC error body (code -32001, no id), the shape MCP clients show. */
export const rpcRefusal = (status: ContentfulStatusCode, message: string): Response =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

/**
 * A guard's refusal in the form the route's client reads: JSON-RPC for `/mcp`, else
 * `{"error": …}` with any further fields (such as `fix`).
 */
export const refuse = (
  c: Context,
  status: ContentfulStatusCode,
  error: string,
  extra: Record<string, string> = {},
): Response =>
  MCP_ROUTE.test(c.req.path)
    ? rpcRefusal(status, [error, ...Object.values(extra)].join(' '))
    : c.json({ error, ...extra }, status);
