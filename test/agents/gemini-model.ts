import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A scripted stand-in for the Gemini API (generativelanguage v1beta), so the real Gemini CLI runs
// offline and deterministically: each main-loop request (`:streamGenerateContent?alt=sse`) is the next
// step of a script, streamed back as the API streams it; side requests (`:generateContent` with a JSON
// schema: the model router's classifier and the like) are answered from their schema. Every request
// is recorded for the test.

/** A part of a Gemini `Content`: text, a call the model makes, or the CLI's answer to one. */
export interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; id?: string; response: Record<string, unknown> };
}

/** One message of a conversation: `user` (prompts, tool results) or `model`. */
export interface Content {
  role: string;
  parts: Part[];
}

/** A function the CLI offers the model, as it declares it. */
export interface FunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: { properties?: Record<string, unknown>; required?: string[] };
}

/** The fields of a `generateContent` / `streamGenerateContent` body the tests read. */
export interface GeminiBody {
  contents: Content[];
  systemInstruction?: { parts: Part[] };
  tools?: Array<{ functionDeclarations?: FunctionDeclaration[] }>;
  generationConfig?: { responseJsonSchema?: JsonSchema; responseSchema?: JsonSchema } & Record<
    string,
    unknown
  >;
}

/** What kind of request the CLI made: a main-loop turn, a side question, a token count, or anything else. */
export type RequestKind = 'turn' | 'side' | 'count' | 'other';

/** One HTTP request the CLI made to the scripted server, body parsed when it is JSON. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The model named in the path (`models/<model>:<method>`), if any. */
  model: string | null;
  kind: RequestKind;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A call the model makes: a built-in tool (`run_shell_command`) or an MCP one (`mcp_pulse_pulse_should_interrupt`). */
export interface FunctionCall {
  name: string;
  args?: Record<string, unknown>;
}

/** What the model says in one turn: plain text, or a list of texts and calls. */
export type Turn = string | Array<string | FunctionCall>;

/** A main-loop request as a step sees it: the body, and helpers to read what the CLI sent back. */
export interface ModelRequest {
  body: GeminiBody;
  /** The `response` object of the latest `functionResponse` for tool `name` (`{output}` or `{error}`). */
  responseTo(name: string): Record<string, unknown> | undefined;
  /** Every text part of the messages with this role (`user`, `model`), in order. */
  texts(role: string): string[];
  /** The names of the functions offered. */
  toolNames(): string[];
}

/** One step of a script: sees the request, may act on the world first, returns the model's turn. */
export type Step = (request: ModelRequest) => Turn | Promise<Turn>;

/** A running scripted Gemini API server. */
export interface ScriptedGemini {
  /** `http://127.0.0.1:<port>`, for `GOOGLE_GEMINI_BASE_URL`. */
  baseUrl: string;
  /** Every request received, in order, side requests included. */
  requests: RecordedRequest[];
  /** The bodies of the main-loop requests, in order (those past the end of the script too). */
  turns(): GeminiBody[];
  /** Main-loop requests that came after the script ended (answered with a plain "done"). */
  readonly overruns: number;
  /** Errors thrown by steps (the request is answered with a 400 error). */
  errors: Error[];
  close(): Promise<void>;
}

/** The subset of OpenAPI schema the CLI sends in `responseJsonSchema`. */
interface JsonSchema {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
}

/**
 * A value that fits a side request's schema: the first enum value, a number, `false`, an empty list,
 * or a short string; `next_speaker` is `user`, so a "should the model go on" check lets the turn end.
 */
const valueFor = (schema: JsonSchema | undefined, key = ''): unknown => {
  if (key === 'next_speaker') return 'user';
  if (schema?.enum !== undefined) return schema.enum[0];
  switch (schema?.type?.toUpperCase()) {
    case 'OBJECT':
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, inner]) => [name, valueFor(inner, name)]),
      );
    case 'INTEGER':
    case 'NUMBER':
      return 10;
    case 'BOOLEAN':
      return false;
    case 'ARRAY':
      return [];
    default:
      return 'scripted';
  }
};

const USAGE = { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 };

/** One `GenerateContentResponse`: the parts as one candidate, finished or not. */
const response = (parts: Part[], finished: boolean, responseId: string) => ({
  candidates: [
    { content: { role: 'model', parts }, index: 0, ...(finished ? { finishReason: 'STOP' } : {}) },
  ],
  usageMetadata: USAGE,
  modelVersion: 'gemini-2.5-pro',
  responseId,
});

const partsOf = (turn: Turn): Part[] =>
  (typeof turn === 'string' ? [turn] : turn).map((part) =>
    typeof part === 'string' ? { text: part } : { functionCall: { name: part.name, args: part.args ?? {} } },
  );

/** Writes one turn as the API's SSE stream (`alt=sse`): a chunk per part, the last one finished. */
const streamTurn = (res: ServerResponse, turn: Turn, responseId: string) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const parts = partsOf(turn);
  parts.forEach((part, index) => {
    const chunk = response([part], index === parts.length - 1, responseId);
    res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  });
  res.end();
};

/** An error as the API sends it: HTTP status and `{error: {code, message, status}}`. */
const sendError = (res: ServerResponse, code: number, status: string, message: string) => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code, message, status } }));
};

const modelRequest = (body: GeminiBody): ModelRequest => ({
  body,
  responseTo: (name) =>
    body.contents.flatMap((content) => content.parts).findLast((part) => part.functionResponse?.name === name)
      ?.functionResponse?.response,
  texts: (role) =>
    body.contents
      .filter((content) => content.role === role)
      .flatMap((content) => content.parts.flatMap((part) => (part.thought ? [] : (part.text ?? [])))),
  toolNames: () =>
    (body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map(({ name }) => name)),
});

const kindOf = (method: string, path: string): RequestKind => {
  if (method !== 'POST') return 'other';
  if (path.includes(':streamGenerateContent')) return 'turn';
  if (path.includes(':generateContent')) return 'side';
  if (path.includes(':countTokens')) return 'count';
  return 'other';
};

/**
 * Starts a scripted Gemini API server on an ephemeral 127.0.0.1 port. Each main-loop request runs the
 * next step; a side request gets a value that fits its JSON schema (or "ok") and consumes no step; a
 * token count gets a fixed count; any other path a 404 in the API's error shape.
 */
export const startScriptedGemini = async (steps: Step[]): Promise<ScriptedGemini> => {
  const requests: RecordedRequest[] = [];
  const turnBodies: GeminiBody[] = [];
  const errors: Error[] = [];
  let overruns = 0;
  let counter = 0;
  const server = createServer(async function scriptedGemini(req, res) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = raw;
    try {
      body = raw === '' ? null : JSON.parse(raw);
    } catch {}
    const method = req.method ?? '';
    const path = req.url ?? '';
    const kind = kindOf(method, path);
    const model = /\/models\/([^:/?]+)/.exec(path)?.[1] ?? null;
    requests.push({ method, path, model, kind, headers: req.headers, body });
    const responseId = `scripted-${++counter}`;
    if (kind === 'turn') {
      const gemini = body as GeminiBody;
      turnBodies.push(gemini);
      const step = steps[turnBodies.length - 1];
      if (step === undefined) {
        overruns += 1;
        return streamTurn(res, 'done', responseId);
      }
      try {
        return streamTurn(res, await step(modelRequest(gemini)), responseId);
      } catch (error) {
        errors.push(error as Error);
        return sendError(res, 400, 'INVALID_ARGUMENT', String(error));
      }
    }
    if (kind === 'side') {
      const config = (body as GeminiBody).generationConfig;
      const schema = config?.responseJsonSchema ?? config?.responseSchema;
      const text = schema === undefined ? 'ok' : JSON.stringify(valueFor(schema));
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(response([{ text }], true, responseId)));
    }
    if (kind === 'count') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ totalTokens: USAGE.promptTokenCount }));
    }
    sendError(res, 404, 'NOT_FOUND', `scripted Gemini API: no ${method} ${path}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    turns: () => [...turnBodies],
    get overruns() {
      return overruns;
    },
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
