import { expect } from 'vitest';
import { HOOK_AGENTS } from '../../src/hooks/events.js';
import { callOneShot, type HostileCase, json, rawRequest, rpc } from './harness.js';

// Rows aimed at the HTTP and JSON-RPC surface; none changes state, so they share one daemon.

const post = (url: string, body: string | Buffer, headers?: Record<string, string>) =>
  rawRequest(url, { body, ...(headers ? { headers } : {}) });

/** A request the JSON-RPC layer refuses: the status, the code, and words of the message. */
const refused =
  (body: string | Buffer, status: number, code: number, words: RegExp) => async (d: { url: string }) => {
    const answer = await post(d.url, body);
    expect(answer.status, answer.text).toBe(status);
    const error = json(answer).error;
    expect(error.code, answer.text).toBe(code);
    expect(error.message).toMatch(words);
  };

/** A tool call with wrong arguments: an isError result saying the input is invalid and naming the argument. */
const badArgument = (tool: string, args: unknown, argument: string) => async (d: { url: string }) => {
  const answer = await callOneShot(d as never, tool, args);
  expect(answer.result?.isError, JSON.stringify(answer)).toBe(true);
  const text = answer.result!.content![0]!.text;
  expect(text).toContain('Input validation error');
  expect(text).toContain(argument);
};

/** A tool call the tool itself refuses: not accepted, with a code. */
const toolRefusal = (tool: string, args: unknown, code: string) => async (d: { url: string }) => {
  const answer = await callOneShot(d as never, tool, args);
  expect(answer.result?.isError).toBeFalsy();
  expect(answer.result!.structuredContent).toMatchObject({ accepted: false, code });
};

const invalidRequest = /^Invalid Request: not a JSON-RPC 2\.0 message/;
const FIXED_SHAPE =
  'the SDK answered "Parse error" (-32700) to valid JSON of the wrong shape; now -32600 says so';

export const protocolRows: HostileCase[] = [
  {
    name: 'malformed JSON (cut mid-object) gets 400 and -32700',
    covered: 'test/e2e/http-surface.test.ts (the same cut); this row cuts inside a string',
    run: refused('{"jsonrpc":"2.0","id":1,"method":"tools/li', 400, -32700, /not valid JSON/),
  },
  {
    name: 'an empty body gets 400 and -32700',
    run: refused('', 400, -32700, /not valid JSON/),
  },
  {
    name: 'a non-UTF-8 binary body gets 400 and -32700',
    run: refused(Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x7b, 0xc3]), 400, -32700, /not valid JSON/),
  },
  {
    name: 'a JSON null body gets 400 and -32600 Invalid Request',
    bug: FIXED_SHAPE,
    run: refused('null', 400, -32600, invalidRequest),
  },
  {
    name: 'a bare JSON number gets 400 and -32600',
    run: refused('42', 400, -32600, invalidRequest),
  },
  {
    name: 'a message without a method gets 400 and -32600, echoing its id',
    run: async (d) => {
      const answer = await post(d.url, JSON.stringify({ jsonrpc: '2.0', id: 7 }));
      expect(answer.status).toBe(400);
      expect(json(answer)).toMatchObject({ id: 7, error: { code: -32600 } });
    },
  },
  {
    name: 'jsonrpc "1.0" gets 400 and -32600',
    run: refused(
      JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/list' }),
      400,
      -32600,
      invalidRequest,
    ),
  },
  {
    name: 'no jsonrpc member at all gets 400 and -32600',
    run: refused(JSON.stringify({ id: 1, method: 'tools/list' }), 400, -32600, invalidRequest),
  },
  {
    name: 'params as a string gets 400 and -32600',
    run: refused(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'x' }),
      400,
      -32600,
      invalidRequest,
    ),
  },
  {
    name: 'tools/call with arguments as a string gets -32602 naming params.arguments',
    bug: 'the SDK answered -32603 Internal error with a raw zod dump; now -32602 names the field',
    run: async (d) => {
      const answer = await post(
        d.url,
        rpc('tools/call', { name: 'pulse_should_interrupt', arguments: 'x' }, 3),
      );
      expect(answer.status).toBe(200);
      expect(json(answer)).toMatchObject({ id: 3, error: { code: -32602 } });
      expect(json(answer).error.message).toMatch(/^Invalid params for tools\/call: params\.arguments: /);
    },
  },
  {
    name: 'tools/call with a numeric tool name gets -32602 naming params.name',
    run: refused(rpc('tools/call', { name: 5 }), 200, -32602, /params\.name/),
  },
  {
    name: 'resources/read without a uri gets -32602 naming params.uri',
    run: refused(rpc('resources/read', {}), 200, -32602, /params\.uri/),
  },
  {
    name: 'prompts/get with an object argument gets -32602 naming it',
    run: refused(
      rpc('prompts/get', { name: 'pulse_replan', arguments: { x: {} } }),
      200,
      -32602,
      /params\.arguments\.x/,
    ),
  },
  {
    name: 'a batch holding garbage next to a valid call gets 400 and -32600',
    run: refused(
      JSON.stringify([1, 'x', { jsonrpc: '2.0', id: 2, method: 'tools/list' }]),
      400,
      -32600,
      invalidRequest,
    ),
  },
  {
    name: 'an empty batch gets 400 and -32600 (it was a silent 202)',
    bug: 'an empty batch was answered 202 with no body; JSON-RPC asks for an Invalid Request error',
    run: refused('[]', 400, -32600, /empty batch/),
  },
  {
    name: 'a valid batch of two requests gets both answers',
    run: async (d) => {
      const body = JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
        { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
      ]);
      const answer = await post(d.url, body);
      expect(answer.status).toBe(200);
      expect(
        json<Array<{ id: string }>>(answer)
          .map((m) => m.id)
          .sort(),
      ).toEqual(['a', 'b']);
    },
  },
  {
    name: 'an unknown method gets -32601 Method not found',
    run: refused(rpc('pulse/explode'), 200, -32601, /Method not found/),
  },
  {
    name: 'a null id gets 400 and -32600 (a request needs a string or number id)',
    run: refused(rpc('ping', {}, null), 400, -32600, invalidRequest),
  },
  {
    name: 'a nested-object id gets 400 and -32600',
    run: refused(rpc('ping', {}, { a: { b: [1] } }), 400, -32600, invalidRequest),
  },
  {
    name: 'a unicode id (emoji, NUL, RTL override) comes back byte for byte',
    run: async (d) => {
      const id = '🚀ü\u0000\u202e';
      const answer = await post(d.url, rpc('ping', {}, id));
      expect(answer.status).toBe(200);
      expect(json(answer).id).toBe(id);
    },
  },
  {
    name: 'a 1,000,000-character id under the body limit is answered and echoed',
    run: async (d) => {
      const id = 'i'.repeat(1_000_000);
      const answer = await post(d.url, rpc('ping', {}, id));
      expect(answer.status).toBe(200);
      expect(json(answer).id).toBe(id);
    },
  },
  {
    name: 'a 1 MiB id (body over the limit) gets 413 with the limit named',
    run: refused(
      rpc('ping', {}, 'i'.repeat(1024 * 1024)),
      413,
      -32600,
      /too large: the limit is 1048576 bytes/,
    ),
  },
  {
    name: 'a 2 MiB body sent chunked gets 413',
    covered: 'test/e2e/http-surface.test.ts (1 MiB, declared and chunked)',
    run: async (d) => {
      const answer = await rawRequest(d.url, {
        body: ' '.repeat(2 * 1024 * 1024),
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      expect(answer.status).toBe(413);
    },
  },
  {
    name: 'a tools/call notification (no id) gets 202 and no body',
    run: async (d) => {
      const answer = await post(
        d.url,
        JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'pulse_should_interrupt' } }),
      );
      expect(answer.status).toBe(202);
      expect(answer.text).toBe('');
    },
  },
  {
    name: 'Content-Type text/plain gets 415',
    run: async (d) => {
      const answer = await post(d.url, rpc('tools/list'), { 'content-type': 'text/plain' });
      expect(answer.status).toBe(415);
      expect(json(answer).error.message).toMatch(/send Content-Type: application\/json/);
    },
  },
  {
    name: 'PUT /mcp without a session gets 400 naming Mcp-Session-Id',
    run: async (d) => {
      const answer = await rawRequest(d.url, { method: 'PUT', body: '' });
      expect(answer.status).toBe(400);
      expect(json(answer).error.message).toMatch(/Mcp-Session-Id/);
    },
  },
  {
    name: 'last_seen_event_id: 5 is an isError result naming the argument',
    covered: 'test/e2e/http-surface.test.ts (42); kept as the issue names it',
    run: badArgument('pulse_should_interrupt', { last_seen_event_id: 5 }, 'last_seen_event_id'),
  },
  {
    name: 'agent: {} to pulse_should_interrupt is an isError result naming agent',
    run: badArgument('pulse_should_interrupt', { agent: {} }, 'agent'),
  },
  {
    name: 'event_id: {} to pulse_ack_replan is an isError result and clears nothing',
    run: badArgument('pulse_ack_replan', { event_id: {} }, 'event_id'),
  },
  {
    name: 'pulse_ack_replan without event_id is an isError result',
    run: badArgument('pulse_ack_replan', {}, 'event_id'),
  },
  {
    name: 'event_id "" is refused with code missing_event_id',
    run: toolRefusal('pulse_ack_replan', { event_id: '' }, 'missing_event_id'),
  },
  {
    name: 'an unknown event id of 10,000 unicode characters is refused with code unknown_event',
    run: toolRefusal('pulse_ack_replan', { event_id: `evt_${'ü'.repeat(10_000)}` }, 'unknown_event'),
  },
  {
    name: 'outcomes: [] to pulse_ack_events is an isError result naming outcomes',
    run: badArgument('pulse_ack_events', { delivery_id: 'dlv_x', outcomes: [] }, 'outcomes'),
  },
  {
    name: 'delivery_id: 5 is an isError result naming delivery_id',
    run: badArgument('pulse_ack_events', { delivery_id: 5 }, 'delivery_id'),
  },
  {
    name: 'an outcome that is not told/not_worth_saying/later is an isError result',
    run: badArgument('pulse_ack_events', { delivery_id: 'dlv_x', outcomes: { e: 'bogus' } }, 'outcomes.e'),
  },
  {
    name: 'an unknown delivery id is refused with code unknown_delivery',
    run: async (d) => {
      const answer = await callOneShot(d as never, 'pulse_ack_events', { delivery_id: 'dlv_nope' });
      expect(answer.result!.structuredContent).toMatchObject({ accepted: false, code: 'unknown_delivery' });
    },
  },
  {
    name: 'an unknown tool is a -32602 error naming it',
    covered: 'test/e2e/http-surface.test.ts (pulse_nope)',
    run: async (d) => {
      const answer = (await callOneShot(d as never, 'rm -rf /')) as { result?: unknown; error?: unknown };
      expect(answer.result).toBeUndefined();
      expect(answer.error).toMatchObject({ code: -32602, message: 'Tool rm -rf / not found' });
    },
  },
  {
    name: 'resources/read of file:///etc/passwd gets -32602 Resource not found',
    run: refused(
      rpc('resources/read', { uri: 'file:///etc/passwd' }),
      200,
      -32602,
      /Resource not found: file:\/\/\/etc\/passwd/,
    ),
  },
  {
    name: 'an unknown prompt gets -32602 Prompt not found',
    run: refused(rpc('prompts/get', { name: 'pulse_pwn' }), 200, -32602, /Prompt pulse_pwn not found/),
  },
  {
    name: 'a hook posting garbage lets the agent go on, telling the user its input is not JSON',
    run: async (d) => {
      const answer = await post(new URL('/hook/claude/PreToolUse', d.url).href, '{{{');
      expect(answer.status).toBe(200);
      expect(json<{ systemMessage: string }>(answer).systemMessage).toMatch(
        /^pulse: the claude hook input is not JSON .*; not enforcing replans\.$/,
      );
    },
  },
  {
    name: 'a hook route naming an agent or event pulse does not answer gets 404 naming what it answers',
    run: async (d) => {
      const agent = await post(new URL('/hook/evil/PreToolUse', d.url).href, '{}');
      expect(agent.status).toBe(404);
      expect(agent.text).toBe(`No hooks for "evil": pulse answers ${HOOK_AGENTS.join(', ')}.`);
      const event = await post(new URL('/hook/claude/rm-rf', d.url).href, '{}');
      expect(event.status).toBe(404);
      expect(event.text).toMatch(/"rm-rf" is not a claude hook event pulse answers \(SessionStart, /);
    },
  },
  {
    name: 'a hook input over 1 MiB is answered unread, never allowed (a 413 would let the call run)',
    run: async (d) => {
      const body = JSON.stringify({
        session_id: 's',
        hook_event_name: 'PreToolUse',
        prompt: 'x'.repeat(1_100_000),
      });
      const answer = await post(new URL('/hook/claude/PreToolUse', d.url).href, body);
      expect(answer.status).toBe(200);
      const { hookSpecificOutput } = JSON.parse(answer.text) as {
        hookSpecificOutput?: Record<string, unknown>;
      };
      expect(hookSpecificOutput?.permissionDecision ?? 'deny').toBe('deny');
    },
  },
  {
    name: 'the status stream with a foreign Host gets 403 naming it',
    run: async (d) => {
      const answer = await rawRequest(new URL('/status/stream', d.url).href, {
        method: 'GET',
        headers: { host: 'evil.example', accept: 'text/event-stream' },
      });
      expect(answer.status).toBe(403);
      expect(json(answer).error).toMatch(/evil\.example/);
    },
  },
  {
    name: 'the status stream with a Host smuggling userinfo (localhost:1@evil) is refused',
    run: async (d) => {
      const answer = await rawRequest(new URL('/status/stream', d.url).href, {
        method: 'GET',
        headers: { host: 'localhost:1@evil.example', accept: 'text/event-stream' },
      });
      expect([400, 403]).toContain(answer.status);
      expect(answer.text).not.toMatch(/^data:/m);
    },
  },
];
