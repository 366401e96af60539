import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { listenLoopback, readRequestBody } from './cli-process.js';

// A scripted stand-in for the OpenAI Chat Completions API, so CLIs that speak it (Copilot CLI with
// a custom provider, opencode through @ai-sdk/openai-compatible) run offline and deterministically:
// each model turn is the next step of a script, streamed back as `chat.completion.chunk` events the
// way api.openai.com streams them (or one `chat.completion` object when the request does not stream).

/** One HTTP request a CLI made to the scripted server, body parsed when it is JSON. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A tool call as Chat Completions carries it: a function's `arguments` are JSON text, a custom tool's `input` free text. */
export type ChatToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } };

/** A message of a Chat Completions request (system, user, assistant, tool). */
export interface ChatMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** The fields of a Chat Completions request body the tests read. */
export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  /** Function tools; a custom tool (`type: "custom"`) has `custom` instead of `function`. */
  tools?: Array<{
    type: string;
    function: { name: string; description?: string; parameters?: unknown };
    custom?: { name: string };
  }>;
  [key: string]: unknown;
}

/** A tool call the model makes in a turn; `id` defaults to a fresh `call_…`. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
  id?: string;
}

/** A call of a free-form (custom) tool, such as the `apply_patch` gpt-5 models are offered: its input is text. */
export interface CustomToolCall {
  name: string;
  input: string;
  id?: string;
}

/** What the model says in one turn: plain text, or text parts and tool calls (text first, as the API sends). */
export type Turn = string | Array<string | ToolCall | CustomToolCall>;

/** A model request as a step sees it: the body, and helpers to read what the agent sent back. */
export interface ModelRequest {
  body: ChatBody;
  headers: IncomingHttpHeaders;
  /** The text the agent sent back for a tool call (the `tool` message with that `tool_call_id`). */
  outputOf(callId: string): string | undefined;
  /** Every text of the messages with this role (`system`, `user`), in order. */
  texts(role: string): string[];
  /** The names of the tools offered. */
  toolNames(): string[];
}

/** One step of a script: sees the request, may act on the world first, returns the model's turn. */
export type Step = (request: ModelRequest) => Turn | Promise<Turn>;

/** Tells a turn of the agent's main loop from a side request (a title, a summary): side requests consume no step. */
export type IsTurn = (body: ChatBody) => boolean;

/** A running scripted model server. */
export interface ScriptedChatModel {
  /** `http://127.0.0.1:<port>/v1`, for the CLI's base URL. */
  baseUrl: string;
  /** Every request received, in order, side requests included. */
  requests: RecordedRequest[];
  /** The bodies of the turn requests, in order (those past the end of the script too). */
  turns(): ChatBody[];
  /** Turn requests that came after the script ended (answered with a plain "done"). */
  overruns: number;
  /** Errors thrown by steps (the request is answered with HTTP 500 and an error object). */
  errors: Error[];
  close(): Promise<void>;
}

/** The text of a message's content, whether a string or a list of parts. */
export const contentText = (content: ChatMessage['content']): string =>
  typeof content === 'string' ? content : (content ?? []).map((part) => part.text ?? '').join('');

const modelRequest = (body: ChatBody, headers: IncomingHttpHeaders): ModelRequest => ({
  body,
  headers,
  outputOf: (callId) => {
    const message = body.messages.find((entry) => entry.role === 'tool' && entry.tool_call_id === callId);
    return message === undefined ? undefined : contentText(message.content);
  },
  texts: (role) =>
    body.messages.filter((entry) => entry.role === role).map((entry) => contentText(entry.content)),
  toolNames: () => (body.tools ?? []).map((tool) => tool.custom?.name ?? tool.function.name),
});

/** The assistant message and finish reason of one turn, with call ids filled in. */
const messageOf = (turn: Turn, nextId: () => string) => {
  const parts = typeof turn === 'string' ? [turn] : turn;
  const text = parts.filter((part): part is string => typeof part === 'string').join('');
  const calls: ChatToolCall[] = parts
    .filter((part) => typeof part !== 'string')
    .map((call) => {
      const id = call.id ?? `call_${nextId()}`;
      return 'input' in call
        ? { id, type: 'custom', custom: { name: call.name, input: call.input } }
        : { id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } };
    });
  return { text, calls, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' };
};

const USAGE = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };

/** Writes one turn as the API's SSE stream: a role chunk, content and tool-call deltas, the finish, usage, `[DONE]`. */
const streamTurn = (res: ServerResponse, body: ChatBody, turn: Turn, nextId: () => string) => {
  const id = `chatcmpl-${nextId()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices, ...extra })}\n\n`,
    );
  const { text, calls, finish_reason } = messageOf(turn, nextId);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  if (text !== '') chunk([{ index: 0, delta: { content: text }, finish_reason: null }]);
  calls.forEach((call, index) => {
    const [head, tail] =
      call.type === 'function'
        ? [
            { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
            { index, function: { arguments: call.function.arguments } },
          ]
        : [
            { index, id: call.id, type: 'custom', custom: { name: call.custom.name, input: '' } },
            { index, custom: { input: call.custom.input } },
          ];
    chunk([{ index: 0, delta: { tool_calls: [head] }, finish_reason: null }]);
    chunk([{ index: 0, delta: { tool_calls: [tail] }, finish_reason: null }]);
  });
  chunk([{ index: 0, delta: {}, finish_reason }]);
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage === true) chunk([], { usage: USAGE });
  res.end('data: [DONE]\n\n');
};

/** Writes one turn as a single `chat.completion` object, for a request that does not stream. */
const answerTurn = (res: ServerResponse, body: ChatBody, turn: Turn, nextId: () => string) => {
  const { text, calls, finish_reason } = messageOf(turn, nextId);
  const message = {
    role: 'assistant',
    content: text === '' ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: `chatcmpl-${nextId()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message, finish_reason }],
      usage: USAGE,
    }),
  );
};

/** By default a turn is a request that offers tools; a title or summary request offers none. */
const offersTools: IsTurn = (body) => (body.tools ?? []).length > 0;

/**
 * Starts a scripted Chat Completions server on an ephemeral 127.0.0.1 port. Each turn request
 * (`isTurn`) runs the next step; side requests get a short answer and consume no step. `GET
 * /v1/models` lists `models`; other paths get `{}`.
 */
export const startScriptedChatModel = async (
  steps: Step[],
  { isTurn = offersTools, models = ['scripted'] }: { isTurn?: IsTurn; models?: string[] } = {},
): Promise<ScriptedChatModel> => {
  const requests: RecordedRequest[] = [];
  const turnBodies: ChatBody[] = [];
  const errors: Error[] = [];
  let overruns = 0;
  let counter = 0;
  const nextId = () => String(++counter).padStart(4, '0');
  const server = createServer(async function scriptedChatModel(req, res) {
    const body = await readRequestBody(req);
    const path = req.url ?? '';
    requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    if (req.method === 'POST' && path.startsWith('/v1/chat/completions')) {
      const chat = body as ChatBody;
      const answer = chat.stream === true ? streamTurn : answerTurn;
      if (!isTurn(chat)) return answer(res, chat, 'ok', nextId);
      turnBodies.push(chat);
      const step = steps[turnBodies.length - 1];
      if (step === undefined) {
        overruns += 1;
        return answer(res, chat, 'done', nextId);
      }
      try {
        return answer(res, chat, await step(modelRequest(chat, req.headers)), nextId);
      } catch (error) {
        errors.push(error as Error);
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (!path.startsWith('/v1/models')) return res.end('{}');
    const data = models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' }));
    res.end(JSON.stringify({ object: 'list', data }));
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
