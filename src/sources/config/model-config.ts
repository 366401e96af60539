// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config's own syntax, not a mistaken template.
import { z } from 'zod';
import { ConfigError } from './config-error.js';
import {
  type Fixes,
  formatPath,
  isRecord,
  type Parsing,
  type Path,
  parseWith,
  warnUnknownKeys,
} from './config-parsing.js';
import { expand } from './expand-env.js';
import { unsetVariablesReason, variableReferences } from './variables.js';

/** An OpenAI-compatible Chat Completions endpoint that judges events (`"thinker": "model"`). */
export interface ModelConfig {
  /** Without a trailing slash: requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`; null for a local server that needs none. */
  apiKey: string | null;
  /** Limit on each request. */
  timeoutMs: number;
  /** Events per request: a bigger batch (a backlog) is sent in several. */
  maxEvents: number;
}

export const MODEL_DEFAULTS = { timeout_sec: 30, max_events: 50 } as const;

// One fix serves the block (reflection.model) and the model's name inside it: both keys are "model".
const MODEL_FIXES: Fixes = {
  model:
    'Write the block as {"base_url": "http://127.0.0.1:11434/v1", "model": "qwen2.5:7b-instruct"}: "model" inside it is the name the server knows the model by.',
  base_url:
    'Write the API root of an OpenAI-compatible server, e.g. "base_url": "http://127.0.0.1:11434/v1".',
  api_key: 'Write the key as "${OPENAI_API_KEY}" (from the environment), or leave it out for a local server.',
  timeout_sec: 'Write a number of seconds from 1 to 600, e.g. "timeout_sec": 30.',
  max_events: 'Write a whole number from 1 to 200, e.g. "max_events": 50.',
};

const modelSchema = z.object({
  base_url: z.string().min(1),
  model: z.string().min(1),
  api_key: z.string().min(1).optional(),
  timeout_sec: z.number().min(1).max(600).default(MODEL_DEFAULTS.timeout_sec),
  max_events: z.number().int().min(1).max(200).default(MODEL_DEFAULTS.max_events),
});

const checkBaseUrl = (url: string, at: Path, parsing: Parsing): string => {
  const fail = (problem: string) =>
    new ConfigError({ file: parsing.file, jsonPath: formatPath(at), problem, fix: MODEL_FIXES.base_url! });
  if (!URL.canParse(url)) throw fail('is not an absolute URL');
  const { protocol } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:')
    throw fail(`must be http:// or https://, got ${protocol}//`);
  return url.replace(/\/+$/, '');
};

/**
 * Validates the `model` block of `reflection`. `${VAR}` is expanded in `base_url` and `api_key`;
 * the key is a secret whether it came from the environment or was written in the file.
 */
/**
 * `expand`, refusing an unset `${VAR}`: a thinker without its key or URL cannot judge anything, so
 * the file counts as broken (the last good config keeps running) and the error says what to export.
 */
const expandSet = (text: string, at: Path, parsing: Parsing): string => {
  const unset = variableReferences(text, at).filter(({ variable }) => parsing.env[variable] === undefined);
  if (unset.length > 0) {
    throw new ConfigError({
      file: parsing.file,
      jsonPath: formatPath(at),
      problem: `\${${unset[0]!.variable}} is not set in the environment`,
      fix: unsetVariablesReason(unset, parsing.file),
    });
  }
  return expand(text, parsing);
};

export const modelOf = (raw: unknown, at: Path, parsing: Parsing): ModelConfig => {
  if (isRecord(raw)) warnUnknownKeys(raw, modelSchema.shape, at, parsing, 'reflection.model');
  const m = parseWith(modelSchema, raw, at, parsing, MODEL_FIXES);
  const apiKey = m.api_key === undefined ? null : expandSet(m.api_key, [...at, 'api_key'], parsing);
  if (apiKey !== null && apiKey !== '') parsing.secrets.add(apiKey);
  return {
    baseUrl: checkBaseUrl(expandSet(m.base_url, [...at, 'base_url'], parsing), [...at, 'base_url'], parsing),
    model: m.model,
    apiKey: apiKey === '' ? null : apiKey,
    timeoutMs: Math.round(m.timeout_sec * 1000),
    maxEvents: m.max_events,
  };
};
