import type { FailureKind } from '../../machines/gate-context.js';
import { redactSecrets } from '../log/redact-secrets.js';
import { AnswerTooLargeError, boundedFetch } from '../sources/client/bounded-fetch.js';
import type { ModelConfig } from '../sources/config/model-config.js';
import { ANSWER_JSON_SCHEMA } from './judgement-answer.js';

/** A model's answer may be this large; the judgements of 200 events take a few kilobytes. */
export const MAX_MODEL_ANSWER_BYTES = 4 * 1024 * 1024;

/** A call to the model's endpoint that brought no text back: unreachable, refused, late or malformed. */
export class ModelCallError extends Error {
  override name = 'ModelCallError';
  /** The HTTP status, when the server answered one. */
  readonly status: number | null;
  /** What went wrong in a few words, without the URL: `HTTP 500`, `no answer within 30 s`. */
  readonly reason: string;
  /** How long the server asked to be left alone (its `Retry-After`), or null. */
  readonly retryAfterMs: number | null;
  /** Whether this answer failed (asked again at the next reflection) or the endpoint did (backed off). */
  readonly kind: FailureKind;

  constructor(
    message: string,
    {
      reason,
      kind,
      status = null,
      retryAfterMs = null,
      cause,
    }: {
      reason: string;
      kind: FailureKind;
      status?: number | null;
      retryAfterMs?: number | null;
      cause?: unknown;
    },
  ) {
    super(message, { cause });
    this.status = status;
    this.reason = reason;
    this.kind = kind;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * An HTTP 500 is one request's server error, as a garbled answer is one answer's: the next may be
 * good. Any other status (429, 502–504, a refused key, a wrong URL) and any `Retry-After` say the
 * endpoint is down, overloaded or misconfigured, and asking again soon only adds load.
 */
const statusKind = (status: number, retryAfter: number | null): FailureKind =>
  status === 500 && retryAfter === null ? 'answer' : 'endpoint';

/** A `Retry-After` header as a wait from `now`: seconds, or an HTTP date; null when absent or unreadable. */
export const retryAfterMs = (header: string | null, now = Date.now()): number | null => {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isFinite(date) ? Math.max(0, date - now) : null;
};

/** The system and user messages of one request. */
export interface Prompt {
  system: string;
  user: string;
}

const fetchAnswer = boundedFetch(MAX_MODEL_ANSWER_BYTES);

/** The request body: deterministic, not streamed, structured output asked for (servers that ignore it still answer text). */
export const chatBody = (config: ModelConfig, prompt: Prompt) => ({
  model: config.model,
  messages: [
    { role: 'system', content: prompt.system },
    { role: 'user', content: prompt.user },
  ],
  temperature: 0,
  stream: false,
  response_format: {
    type: 'json_schema',
    json_schema: { name: 'judgements', strict: true, schema: ANSWER_JSON_SCHEMA },
  },
});

type Content = string | Array<{ type?: string; text?: string }> | null | undefined;

const textOf = (content: Content): string | null => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return null;
};

/** The content of a streamed answer: the `delta.content` of every `data:` line until `[DONE]`. */
export const streamedText = (body: string): string => {
  let text = '';
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]') break;
    try {
      const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: Content } }> };
      text += textOf(chunk.choices?.[0]?.delta?.content) ?? '';
    } catch {
      // A keep-alive comment or a broken line carries no content.
    }
  }
  return text;
};

const repliedText = (body: string, url: string): string => {
  let answer: { choices?: Array<{ message?: { content?: Content; refusal?: string | null } }> };
  try {
    answer = JSON.parse(body);
  } catch {
    throw new ModelCallError(
      `${url} answered something that is not JSON (it began: ${JSON.stringify(body.slice(0, 120))})`,
      { reason: 'an answer that is not JSON', kind: 'answer' },
    );
  }
  const message = answer.choices?.[0]?.message;
  const text = textOf(message?.content);
  if (text !== null && text !== '') return text;
  if (typeof message?.refusal === 'string')
    throw new ModelCallError(`the model refused: ${message.refusal.slice(0, 200)}`, {
      reason: 'the model refused',
      kind: 'answer',
    });
  throw new ModelCallError(`${url} answered without choices[0].message.content`, {
    reason: 'an answer without a message',
    kind: 'answer',
  });
};

const unreachable = (error: unknown, url: string, timeoutMs: number): ModelCallError => {
  const name = (error as Error)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new ModelCallError(`${url} did not answer within ${timeoutMs / 1000} s`, {
      reason: `no answer within ${timeoutMs / 1000} s`,
      kind: 'endpoint',
      cause: error,
    });
  }
  if (error instanceof AnswerTooLargeError)
    return new ModelCallError(`${url}: ${error.message}`, {
      reason: 'an answer too large',
      kind: 'answer',
      cause: error,
    });
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return new ModelCallError(`could not reach ${url}: ${why}`, {
    reason: `unreachable${cause?.code === undefined ? '' : ` (${cause.code})`}`,
    kind: 'endpoint',
    cause: error,
  });
};

/**
 * One Chat Completions request (`POST {base_url}/chat/completions`): the key as a Bearer token,
 * the answer's text back, whether the server sent it whole or streamed it anyway. Bounded by
 * `timeout_sec` and by `signal`; every message is cleared of the key, whatever the server echoed.
 */
export const askChatCompletions = async (
  config: ModelConfig,
  prompt: Prompt,
  signal?: AbortSignal,
): Promise<string> => {
  const url = `${config.baseUrl}/chat/completions`;
  const secret = config.apiKey === null ? [] : [config.apiKey];
  const timeout = AbortSignal.timeout(config.timeoutMs);
  try {
    const response = await fetchAnswer(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(config.apiKey === null ? {} : { authorization: `Bearer ${config.apiKey}` }),
      },
      body: JSON.stringify(chatBody(config, prompt)),
      signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
    });
    const body = await response.text();
    if (!response.ok) {
      const retry = response.headers.get('retry-after');
      const wait = retryAfterMs(retry);
      throw new ModelCallError(
        `${url} answered HTTP ${response.status}${retry === null ? '' : ` (Retry-After: ${retry})`}: ${JSON.stringify(body.slice(0, 200))}`,
        {
          reason: `HTTP ${response.status}`,
          kind: statusKind(response.status, wait),
          status: response.status,
          retryAfterMs: wait,
        },
      );
    }
    const streamed = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    return streamed ? streamedText(body) : repliedText(body, url);
  } catch (error) {
    const known = error instanceof ModelCallError ? error : unreachable(error, url, config.timeoutMs);
    known.message = redactSecrets(known.message, secret);
    throw known;
  }
};
