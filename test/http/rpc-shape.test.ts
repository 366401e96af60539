import { type StandardSchemaV1, specTypeSchemas } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shapeProblem } from '../../src/http/rpc-shape.js';

/** What the spec's own schemas say of one message: whether both checks shapeProblem makes pass. */
const specAccepts = (message: unknown): boolean => {
  const passes = (schema: StandardSchemaV1) =>
    (schema['~standard'].validate(message) as StandardSchemaV1.Result<unknown>).issues === undefined;
  if (!passes(specTypeSchemas.JSONRPCMessage)) return false;
  const method = (message as { method?: unknown }).method;
  const params: Record<string, StandardSchemaV1> = {
    'tools/call': specTypeSchemas.CallToolRequest,
    'resources/read': specTypeSchemas.ReadResourceRequest,
    'prompts/get': specTypeSchemas.GetPromptRequest,
  };
  return typeof method !== 'string' || params[method] === undefined || passes(params[method]);
};

const value = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
  fc.dictionary(
    fc.constantFrom('a', 'progressToken', 'name'),
    fc.oneof(fc.string(), fc.integer(), fc.constant({})),
  ),
);

/** Messages near a tools/call: each field right, missing, or of another type, and now and then an extra key. */
const nearCall = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), value),
    id: fc.oneof(fc.integer(), fc.string(), value, fc.constant(2 ** 60), fc.constant(1.5)),
    method: fc.oneof(
      fc.constantFrom('tools/call', 'tools/list', 'resources/read', 'prompts/get', 'ping'),
      value,
    ),
    params: fc.oneof(
      value,
      fc.record(
        {
          name: fc.oneof(fc.constant('pulse_should_interrupt'), value),
          arguments: fc.oneof(fc.constant({ last_seen_event_id: null }), value),
          _meta: value,
          task: value,
          uri: fc.oneof(fc.constant('pulse://context/latest'), value),
        },
        { requiredKeys: [] },
      ),
    ),
    extra: value,
  },
  { requiredKeys: [] },
);

describe('the JSON-RPC shape check', () => {
  it('passes exactly the messages the spec schemas pass, with or without its fast path', () => {
    fc.assert(
      fc.property(nearCall, (message) => {
        expect(shapeProblem(message) === null).toBe(specAccepts(message));
      }),
      { numRuns: 5_000 },
    );
  });

  it('passes a plain tools/call and refuses one with no name, an extra key or a fractional id', () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: {} } };
    expect(shapeProblem(call)).toBeNull();
    expect(shapeProblem({ ...call, params: { arguments: {} } })?.code).toBe(-32602);
    expect(shapeProblem({ ...call, extra: 1 })?.code).toBe(-32600);
    expect(shapeProblem({ ...call, id: 1.5 })?.code).toBe(-32600);
  });
});
