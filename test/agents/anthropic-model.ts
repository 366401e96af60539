import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A scripted stand-in for the Anthropic Messages API, so the real Claude Code runs offline and
// deterministically. The main conversation follows a script, one step per request; side requests
// (titles, summaries, probes) get a harmless answer and consume no step. Everything is recorded.

/** One content block of a message, as the Messages API spells it (only the fields tests read are typed). */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content?: string | ContentBlock[]; is_error?: boolean }
  | { type: string; [key: string]: unknown };

/** A message of the conversation a request carries. */
export interface Message {
  role: string;
  content: string | ContentBlock[];
}

/** The body of `POST /v1/messages`, as far as the tests read it. */
export interface MessagesRequest {
  model: string;
  messages: Message[];
  system?: string | Array<{ type: string; text: string }>;
  tools?: Array<{ name: string; [key: string]: unknown }>;
  stream?: boolean;
  [key: string]: unknown;
}

/** Any request the CLI sent, recorded as it arrived; `body` is parsed JSON when it was JSON. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** `turn`: a main-conversation turn that consumed a step; `side`: answered without the script; `other`: not a messages call. */
  kind: 'turn' | 'side' | 'other';
}

/** A block of an assistant turn as a step writes it; tool_use ids are filled in when missing. */
export type TurnBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id?: string; name: string; input: unknown };

/** The assistant's answer to one request: `tool_use` when it holds a tool call, else `end_turn`. */
export type Turn = TurnBlock[];

/** One step of the script: sees the request (to read the last tool_result) and answers it, after any side effect. */
export type Step = (request: MessagesRequest) => Turn | Promise<Turn>;

/** Tells a main-conversation turn from a side request (a title, a summary, a quota probe). */
export type IsTurn = (request: MessagesRequest) => boolean;

/** The main loop offers tools; side requests (titles, summaries) offer none. No side request was seen from 2.1.332 with non-essential traffic off. */
const offersTools: IsTurn = (request) => Array.isArray(request.tools) && request.tools.length > 0;

/** A running scripted model. */
export interface ScriptedModel {
  /** What `ANTHROPIC_BASE_URL` should be. */
  url: string;
  /** Every request, in order. */
  requests: RecordedRequest[];
  /** The bodies of the main-conversation turns, in order. */
  turns(): MessagesRequest[];
  /** Steps not yet used: 0 when the run followed the script to its end. */
  remaining(): number;
  /** What a step threw, or a request after the script ended: the test should fail with it. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * The tool_result blocks sent after the assistant's last turn: what the agent reports of its last
 * tool calls (Claude Code may add a `system` message after them, so not only the last message).
 */
export const toolResults = (request: MessagesRequest) => {
  const lastAssistant = request.messages.findLastIndex((message) => message.role === 'assistant');
  return request.messages
    .slice(lastAssistant + 1)
    .flatMap((message) => (typeof message.content === 'string' ? [] : message.content))
    .filter((block): block is Extract<ContentBlock, { type: 'tool_result' }> => block.type === 'tool_result');
};

/** One tool call of the conversation so far, with what the agent sent back for it. */
export interface ToolCall {
  name: string;
  input: unknown;
  /** The tool_result's text; undefined when no result came back (yet). */
  result?: string;
  isError: boolean;
}

/**
 * Every tool call of the conversation a request carries, in order, each with its tool_result: the
 * last request of a run holds the whole history, so this is the run's record of what ran and what was held.
 */
export const toolCalls = (request: MessagesRequest): ToolCall[] => {
  const blocks = request.messages.flatMap((message) =>
    typeof message.content === 'string' ? [] : message.content,
  );
  const results = new Map(
    blocks
      .filter(
        (block): block is Extract<ContentBlock, { type: 'tool_result' }> => block.type === 'tool_result',
      )
      .map((block) => [block.tool_use_id, block]),
  );
  return blocks
    .filter((block): block is Extract<ContentBlock, { type: 'tool_use' }> => block.type === 'tool_use')
    .map(({ id, name, input }) => {
      const result = results.get(id);
      return {
        name,
        input,
        result: result === undefined ? undefined : textOf(result.content),
        isError: result?.is_error === true,
      };
    });
};

/** The text of a tool_result (or any content), its text blocks joined. */
export const textOf = (content: string | ContentBlock[] | undefined): string =>
  typeof content === 'string'
    ? content
    : (content ?? [])
        .filter((block): block is { type: 'text'; text: string } => block.type === 'text')
        .map((block) => block.text)
        .join('\n');

/** Every text the request carries (system, messages, tool results), for asserting what hooks injected. */
export const allText = (request: MessagesRequest): string => {
  const system = typeof request.system === 'string' ? request.system : textOf(request.system);
  const messages = request.messages.flatMap((message) =>
    typeof message.content === 'string'
      ? [message.content]
      : message.content.map((block) =>
          block.type === 'tool_result' ? textOf(block.content as string | ContentBlock[]) : textOf([block]),
        ),
  );
  return [system, ...messages].join('\n');
};

/**
 * The text of a request's messages, tool results left out: what Claude Code and its hooks told the
 * model (prompt, hook context, hook feedback), not what the tools answered.
 */
export const contextText = (request: MessagesRequest): string =>
  request.messages.map((message) => textOf(message.content)).join('\n');

/**
 * The reasons Stop hooks sent the model back with, in order: Claude Code passes each as a user
 * message `<system-reminder>… Stop hook feedback:\n<reason>\n</system-reminder>`.
 */
export const stopFeedback = (request: MessagesRequest): string[] =>
  request.messages
    .filter((message) => message.role === 'user')
    .flatMap((message) =>
      [...textOf(message.content).matchAll(/Stop hook feedback:\n([\s\S]*?)\n<\/system-reminder>/g)].map(
        (match) => match[1]!,
      ),
    );

let idCounter = 0;

const withIds = (turn: Turn): ContentBlock[] =>
  turn.map((block) =>
    block.type === 'tool_use' ? { ...block, id: block.id ?? `toolu_scripted_${++idCounter}` } : block,
  );

const usage = {
  input_tokens: 10,
  output_tokens: 10,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

const messageOf = (model: string, content: ContentBlock[]) => ({
  id: `msg_scripted_${++idCounter}`,
  type: 'message',
  role: 'assistant',
  model,
  content,
  stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
  stop_sequence: null,
  usage,
});

/** The SSE stream the real API sends for one message: each block opened, filled with deltas, closed. */
const sendStream = (response: ServerResponse, message: ReturnType<typeof messageOf>) => {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: object) =>
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', {
    message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
  });
  send('ping', {});
  message.content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      send('content_block_start', { index, content_block: { ...block, input: {} } });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    } else {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', {
        index,
        delta: { type: 'text_delta', text: (block as { text: string }).text },
      });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', {});
  response.end();
};

const sendJson = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => resolve(text));
    request.on('error', reject);
  });

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** What a side request or an unplanned turn is answered with: a short text, so nothing runs. */
const HARMLESS = [{ type: 'text', text: 'ok' }] as const;

/**
 * Starts the scripted model on an ephemeral 127.0.0.1 port. Each main-conversation request runs
 * the next step; `count_tokens` and model lists get plausible answers; anything else a 404 in the
 * API's error shape (recorded, so a new endpoint shows up in `requests`).
 */
export const startAnthropicModel = async ({
  script,
  isTurn = offersTools,
}: {
  script: Step[];
  isTurn?: IsTurn;
}): Promise<ScriptedModel> => {
  const requests: RecordedRequest[] = [];
  const problems: string[] = [];
  let next = 0;
  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? '/';
    const body = parsed(await readBody(request));
    const record: RecordedRequest = {
      method: request.method ?? '',
      path,
      headers: request.headers,
      body,
      kind: 'other',
    };
    requests.push(record);
    const pathname = new URL(path, 'http://x').pathname;
    if (request.method === 'POST' && pathname === '/v1/messages/count_tokens') {
      sendJson(response, 200, { input_tokens: 100 });
      return;
    }
    if (pathname === '/api/hello') {
      // The connectivity probe Claude Code sends when non-essential traffic is not disabled.
      sendJson(response, 200, {});
      return;
    }
    if (request.method === 'GET' && pathname.startsWith('/v1/models')) {
      sendJson(response, 200, { data: [], has_more: false, first_id: null, last_id: null });
      return;
    }
    if (request.method !== 'POST' || pathname !== '/v1/messages' || typeof body !== 'object') {
      sendJson(response, 404, {
        type: 'error',
        error: { type: 'not_found_error', message: `no ${pathname}` },
      });
      return;
    }
    const messages = body as MessagesRequest;
    let content: ContentBlock[] = [...HARMLESS];
    if (isTurn(messages)) {
      record.kind = 'turn';
      const step = script[next++];
      if (step === undefined) problems.push(`turn ${next} came after the script's ${script.length} steps`);
      else {
        try {
          content = withIds(await step(messages));
        } catch (error) {
          problems.push(`step ${next} threw: ${(error as Error).stack ?? error}`);
        }
      }
    } else record.kind = 'side';
    const message = messageOf(messages.model, content);
    if (messages.stream === true) sendStream(response, message);
    else sendJson(response, 200, message);
  };
  const server = createServer((request, response) => {
    answer(request, response).catch((error: Error) => {
      problems.push(`answering ${request.url} failed: ${error.message}`);
      if (!response.headersSent)
        sendJson(response, 500, { type: 'error', error: { type: 'api_error', message: error.message } });
      else response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    turns: () => requests.filter((r) => r.kind === 'turn').map((r) => r.body as MessagesRequest),
    remaining: () => Math.max(0, script.length - next),
    problems,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
