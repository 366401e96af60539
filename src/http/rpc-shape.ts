import { type StandardSchemaV1, specTypeSchemas } from '@modelcontextprotocol/server';

/** The methods whose params the SDK checks only inside its handler, where a bad shape becomes -32603. */
const PARAMS_OF: Record<string, StandardSchemaV1> = {
  'tools/call': specTypeSchemas.CallToolRequest,
  'resources/read': specTypeSchemas.ReadResourceRequest,
  'prompts/get': specTypeSchemas.GetPromptRequest,
};

/** The spec's schemas are zod underneath, so their check is synchronous; the issues, or none. */
const issuesIn = (
  schema: StandardSchemaV1,
  value: unknown,
): readonly StandardSchemaV1.Issue[] | undefined => {
  const result = schema['~standard'].validate(value) as StandardSchemaV1.Result<unknown>;
  return result.issues;
};

/** A JSON-RPC refusal of a request that parsed as JSON but is not a message we can serve. */
export interface ShapeProblem {
  code: -32600 | -32602;
  message: string;
  id: string | number | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * A request both spec checks below would pass without a doubt: a strict JSON-RPC request whose
 * params carry no `_meta` or `task` (whose shapes only zod checks), and for `tools/call` a name and
 * object arguments. Most calls are this; the zod checks cost them more than the rest of the route.
 */
const plainlyValid = (message: unknown): boolean => {
  if (!isObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return false;
  const { id, params } = message;
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return false;
  if (Object.keys(message).some((key) => !REQUEST_KEYS.has(key))) return false;
  if (params === undefined) return !(message.method in PARAMS_OF);
  if (!isObject(params) || '_meta' in params || 'task' in params) return false;
  switch (message.method) {
    case 'tools/call':
      return (
        typeof params.name === 'string' && (params.arguments === undefined || isObject(params.arguments))
      );
    case 'resources/read':
    case 'prompts/get':
      return false;
    default:
      return true;
  }
};

const keyOf = (segment: PropertyKey | StandardSchemaV1.PathSegment): string =>
  String(typeof segment === 'object' ? segment.key : segment);

const issuesOf = (issues: readonly StandardSchemaV1.Issue[]): string =>
  issues
    .slice(0, 3)
    .map((issue) => `${(issue.path ?? []).map(keyOf).join('.') || 'message'}: ${issue.message}`)
    .join('; ');

const idOf = (message: unknown): string | number | null => {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

/**
 * Checks a parsed body before the SDK sees it, so a wrong shape gets a JSON-RPC error that says
 * what is wrong: the SDK answers any of them "Parse error" (-32700), an empty batch with nothing
 * at all, and bad params of a known method as an internal error (-32603) with a zod dump.
 */
export const shapeProblem = (body: unknown): ShapeProblem | null => {
  if (Array.isArray(body) && body.length === 0) {
    return { code: -32600, message: 'Invalid Request: an empty batch holds no message.', id: null };
  }
  for (const message of Array.isArray(body) ? body : [body]) {
    if (plainlyValid(message)) continue;
    if (issuesIn(specTypeSchemas.JSONRPCMessage, message) !== undefined) {
      return {
        code: -32600,
        message: `Invalid Request: not a JSON-RPC 2.0 message ({"jsonrpc":"2.0","id":1,"method":"…","params":{…}}).`,
        id: idOf(message),
      };
    }
    const method = (message as { method?: unknown }).method;
    const schema = typeof method === 'string' ? PARAMS_OF[method] : undefined;
    const issues = schema === undefined ? undefined : issuesIn(schema, message);
    if (issues !== undefined) {
      return {
        code: -32602,
        message: `Invalid params for ${method}: ${issuesOf(issues)}.`,
        id: idOf(message),
      };
    }
  }
  return null;
};
