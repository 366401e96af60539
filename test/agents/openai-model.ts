import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { listenLoopback, readRequestBody } from './cli-process.js';

// A scripted stand-in for the OpenAI Responses API, so the real Codex CLI runs offline and
// deterministically: each model turn Codex asks for is the next step of a script, streamed back as
// Server-Sent Events the way api.openai.com streams them. Every request is recorded for the test.

/** One HTTP request Codex made to the scripted server, body parsed when it is JSON. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** What Codex's `x-codex-turn-metadata` header says this request is (`turn`, or a side request). */
  kind: string | null;
}

/** An item of a Responses API request's `input` (messages, tool calls, tool outputs). */
export interface InputItem {
  type: string;
  role?: string;
  content?: Array<{ type: string; text?: string }> | string;
  call_id?: string;
  name?: string;
  arguments?: string;
  input?: string;
  output?: unknown;
}

/** The fields of a Responses API request body the tests read. */
export interface ResponsesBody {
  model: string;
  input: InputItem[];
  tools?: Array<Record<string, unknown> & { type: string; name?: string }>;
}

/** A function (or MCP) tool call the model makes: `arguments` is sent as JSON text. */
export interface FunctionCall {
  type: 'function_call';
  name: string;
  /** Set when the tool is offered inside a `namespace` tool (Codex's MCP tools). */
  namespace?: string;
  arguments: Record<string, unknown>;
  call_id?: string;
}

/** A call of a free-form tool (Codex's `apply_patch` grammar tool): `input` is raw text. */
export interface CustomToolCall {
  type: 'custom_tool_call';
  name: string;
  input: string;
  call_id?: string;
}

/** A search of Codex's deferred tools (its MCP tools): Codex answers with a `tool_search_output`. */
export interface ToolSearchCall {
  type: 'tool_search_call';
  query: string;
  call_id?: string;
}

/** What the model says in one turn: plain text, or a list of text messages and tool calls. */
export type Turn = string | Array<string | FunctionCall | CustomToolCall | ToolSearchCall>;

/** A model request as a step sees it: the body, and helpers to read what the agent sent back. */
export interface ModelRequest {
  body: ResponsesBody;
  headers: IncomingHttpHeaders;
  /** The text Codex sent back for a tool call (its `function_call_output`/`custom_tool_call_output`). */
  outputOf(callId: string): string | undefined;
  /** Every text of the messages with this role (`developer`, `user`), in order. */
  texts(role: string): string[];
}

/** One step of a script: sees the request, may act on the world first, returns the model's turn. */
export type Step = (request: ModelRequest) => Turn | Promise<Turn>;

/** A running scripted model server. */
export interface ScriptedModel {
  /** `http://127.0.0.1:<port>/v1`, for `[model_providers.<id>] base_url`. */
  baseUrl: string;
  /** Every request received, in order, side requests included. */
  requests: RecordedRequest[];
  /** The bodies of the turn requests, in order (those past the end of the script too). */
  turns(): ResponsesBody[];
  /** Turn requests that came after the script ended (answered with a plain "done"). */
  overruns: number;
  /** Errors thrown by steps (the request is answered with a `response.failed`). */
  errors: Error[];
  close(): Promise<void>;
}

const textOf = (content: InputItem['content']): string[] =>
  typeof content === 'string' ? [content] : (content ?? []).flatMap((part) => part.text ?? []);

/** The text of a tool output, whether Codex sent a string or a list of content parts. */
const outputText = (output: unknown): string =>
  typeof output === 'string'
    ? output
    : Array.isArray(output)
      ? output.map((part: { text?: string }) => part.text ?? '').join('')
      : JSON.stringify(output ?? null);

const modelRequest = (body: ResponsesBody, headers: IncomingHttpHeaders): ModelRequest => ({
  body,
  headers,
  outputOf: (callId) => {
    const item = body.input.find((entry) => entry.type.endsWith('_output') && entry.call_id === callId);
    return item === undefined ? undefined : outputText(item.output);
  },
  texts: (role) =>
    body.input
      .filter((entry) => entry.type === 'message' && entry.role === role)
      .flatMap((entry) => textOf(entry.content)),
});

const kindOf = (headers: IncomingHttpHeaders): string | null => {
  const raw = headers['x-codex-turn-metadata'];
  if (typeof raw !== 'string') return null;
  try {
    return (JSON.parse(raw) as { request_kind?: string }).request_kind ?? null;
  } catch {
    return null;
  }
};

/** Writes one turn as the Responses API's event stream: created, each item added/delta/done, completed. */
const streamTurn = (res: ServerResponse, responseId: string, turn: Turn, nextId: () => string) => {
  const send = (event: Record<string, unknown> & { type: string }) =>
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  send({ type: 'response.created', response: { id: responseId, status: 'in_progress', output: [] } });
  const parts = typeof turn === 'string' ? [turn] : turn;
  parts.forEach((part, output_index) => {
    const id = nextId();
    if (typeof part === 'string') {
      const item = { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed' };
      send({ type: 'response.output_item.added', output_index, item: { ...item, content: [] } });
      send({
        type: 'response.output_text.delta',
        output_index,
        item_id: item.id,
        content_index: 0,
        delta: part,
      });
      const content = [{ type: 'output_text', text: part, annotations: [] }];
      send({ type: 'response.output_item.done', output_index, item: { ...item, content } });
      return;
    }
    const call_id = part.call_id ?? `call_${id}`;
    if (part.type === 'tool_search_call') {
      const item = {
        type: 'tool_search_call',
        id: `ts_${id}`,
        status: 'completed',
        call_id,
        execution: 'client',
      };
      send({ type: 'response.output_item.added', output_index, item: { ...item, arguments: {} } });
      send({
        type: 'response.output_item.done',
        output_index,
        item: { ...item, arguments: { query: part.query } },
      });
      return;
    }
    if (part.type === 'custom_tool_call') {
      const item = {
        type: 'custom_tool_call',
        id: `ctc_${id}`,
        status: 'completed',
        call_id,
        name: part.name,
      };
      send({ type: 'response.output_item.added', output_index, item: { ...item, input: '' } });
      send({
        type: 'response.custom_tool_call_input.delta',
        output_index,
        item_id: item.id,
        delta: part.input,
      });
      send({ type: 'response.output_item.done', output_index, item: { ...item, input: part.input } });
      return;
    }
    const args = JSON.stringify(part.arguments);
    const item = {
      type: 'function_call',
      id: `fc_${id}`,
      status: 'completed',
      call_id,
      name: part.name,
      ...(part.namespace === undefined ? {} : { namespace: part.namespace }),
    };
    send({ type: 'response.output_item.added', output_index, item: { ...item, arguments: '' } });
    send({ type: 'response.function_call_arguments.delta', output_index, item_id: item.id, delta: args });
    send({ type: 'response.output_item.done', output_index, item: { ...item, arguments: args } });
  });
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 110,
  };
  send({ type: 'response.completed', response: { id: responseId, status: 'completed', usage } });
  res.end();
};

/**
 * Starts a scripted Responses API server on an ephemeral 127.0.0.1 port. Each turn request
 * (Codex's `request_kind: "turn"`) runs the next step; side requests (titles, summaries, anything
 * else Codex asks) get a short answer and consume no step; other paths get `{}` (models: an empty list).
 */
export const startScriptedModel = async (steps: Step[]): Promise<ScriptedModel> => {
  const requests: RecordedRequest[] = [];
  const turnBodies: ResponsesBody[] = [];
  const errors: Error[] = [];
  let overruns = 0;
  let counter = 0;
  const nextId = () => String(++counter).padStart(4, '0');
  const server = createServer(async function scriptedModel(req, res) {
    const body = await readRequestBody(req);
    const path = req.url ?? '';
    const kind = kindOf(req.headers);
    requests.push({ method: req.method ?? '', path, headers: req.headers, body, kind });
    if (req.method === 'POST' && path.startsWith('/v1/responses')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const responseId = `resp_${nextId()}`;
      if (kind !== null && kind !== 'turn') return streamTurn(res, responseId, 'ok', nextId);
      const responses = body as ResponsesBody;
      turnBodies.push(responses);
      const step = steps[turnBodies.length - 1];
      if (step === undefined) {
        overruns += 1;
        return streamTurn(res, responseId, 'done', nextId);
      }
      try {
        streamTurn(res, responseId, await step(modelRequest(responses, req.headers)), nextId);
      } catch (error) {
        errors.push(error as Error);
        const failed = {
          id: responseId,
          status: 'failed',
          error: { code: 'server_error', message: String(error) },
        };
        res.end(
          `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', response: failed })}\n\n`,
        );
      }
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(path.startsWith('/v1/models') ? JSON.stringify({ models: [], data: [] }) : '{}');
  });
  const { port, close } = await listenLoopback(server);
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    turns: () => [...turnBodies],
    get overruns() {
      return overruns;
    },
    errors,
    close,
  };
};
