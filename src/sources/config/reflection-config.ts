import { z } from 'zod';
import { type GateInput, RETRY_CAP_MAX_MS } from '../../../machines/gate-settings.js';
import type { ThinkerKind } from '../../../machines/sources-context.js';
import { ConfigError } from './config-error.js';
import {
  type Fixes,
  formatPath,
  isRecord,
  MAX_TIMER_SEC,
  type Parsing,
  type Path,
  parseWith,
  warnUnknownKeys,
} from './config-parsing.js';
import { type ModelConfig, modelOf } from './model-config.js';

/** The `reflection` block of sources.json, in the gate's units. */
export interface ReflectionConfig {
  thinker: ThinkerKind;
  gate: GateInput;
  /** The endpoint of `"thinker": "model"`; null for the other thinkers. */
  model: ModelConfig | null;
}

const REFLECTION_FIXES: Fixes = {
  reflection: 'Write reflection as an object, e.g. {"threshold": 0.6, "lease_sec": 120}.',
  thinker:
    'Write "rules" (the default: source urgency and rules), "agent" (the agent judges every event), "model" (an OpenAI-compatible endpoint, with a "model" block) or "sampling" (the agent\'s own model, through MCP sampling).',
  threshold: 'Write a number from 0 to 1, e.g. "threshold": 0.5.',
  lease_sec: `Write a number of seconds from 1 to ${MAX_TIMER_SEC}, e.g. "lease_sec": 120.`,
  cooldown_sec: `Write a number of seconds from 0 to ${MAX_TIMER_SEC}, e.g. "cooldown_sec": 300.`,
  max_attempts: 'Write a whole number from 1 to 100, e.g. "max_attempts": 5.',
  reflect_every_sec: `Write a number of seconds from 1 to ${MAX_TIMER_SEC}, e.g. "reflect_every_sec": 120.`,
  think_timeout_sec: 'Write a number of seconds from 1 to 600, e.g. "think_timeout_sec": 60.',
  retry_backoff_sec: `Write the longest wait between retries of a failing thinker, in seconds from 1 to ${RETRY_CAP_MAX_MS / 1000}, e.g. "retry_backoff_sec": 300.`,
};

const reflectionSchema = z.object({
  thinker: z.enum(['rules', 'agent', 'model', 'sampling']).default('rules'),
  threshold: z.number().min(0).max(1).optional(),
  lease_sec: z.number().min(1).max(MAX_TIMER_SEC).optional(),
  cooldown_sec: z.number().min(0).max(MAX_TIMER_SEC).optional(),
  max_attempts: z.number().int().min(1).max(100).optional(),
  reflect_every_sec: z.number().min(1).max(MAX_TIMER_SEC).optional(),
  think_timeout_sec: z.number().min(1).max(600).optional(),
  retry_backoff_sec: z.number().min(1).max(MAX_TIMER_SEC).optional(),
  model: z.unknown().optional(),
});

const ms = (sec: number | undefined) => (sec === undefined ? undefined : Math.round(sec * 1000));

/**
 * `retry_backoff_sec` is the cap of the retries' backoff (it was the first wait, 360 s by default,
 * before retries followed `reflect_every_sec`): above 5 minutes it is clamped, and said so.
 */
const retryCapSec = (sec: number | undefined, at: Path, parsing: Parsing): number | undefined => {
  const max = RETRY_CAP_MAX_MS / 1000;
  if (sec === undefined || sec <= max) return sec;
  parsing.warnings.push(
    `${parsing.file}: ${formatPath([...at, 'retry_backoff_sec'])} is ${sec} s, more than the ${max} s a failing thinker may wait at most: ${max} s is used. It is the longest wait between retries: a failed thought is asked again at the next reflection (reflect_every_sec), then, while its endpoint fails, twice as long with each failure in a row.`,
  );
  return max;
};

/** The `model` block: required by `"thinker": "model"`, ignored with a warning by the others. */
const modelBlock = (thinker: ThinkerKind, raw: unknown, at: Path, parsing: Parsing): ModelConfig | null => {
  if (thinker === 'model') {
    if (raw === undefined) {
      throw new ConfigError({
        file: parsing.file,
        jsonPath: formatPath(at),
        problem: '"model" is missing: "thinker": "model" needs the endpoint to ask',
        fix: 'Add e.g. "model": {"base_url": "http://127.0.0.1:11434/v1", "model": "qwen2.5:7b-instruct"} beside "thinker".',
      });
    }
    return modelOf(raw, at, parsing);
  }
  if (raw !== undefined) {
    parsing.warnings.push(
      `${parsing.file}: ${formatPath(at)} is ignored: it is used only with "thinker": "model" (the thinker is "${thinker}").`,
    );
  }
  return null;
};

/**
 * Validates the `reflection` block. Settings left out keep the gate's defaults. With the agent
 * thinker the threshold is 0: every event goes to the agent, and the rules' urgency is a hint.
 */
export const reflectionOf = (raw: unknown, at: Path, parsing: Parsing): ReflectionConfig => {
  if (isRecord(raw)) warnUnknownKeys(raw, reflectionSchema.shape, at, parsing, 'reflection');
  const r = parseWith(reflectionSchema, raw === undefined ? {} : raw, at, parsing, REFLECTION_FIXES);
  const gate: GateInput = {
    threshold: r.thinker === 'agent' ? 0 : r.threshold,
    leaseMs: ms(r.lease_sec),
    cooldownMs: ms(r.cooldown_sec),
    maxAttempts: r.max_attempts,
    reflectEveryMs: ms(r.reflect_every_sec),
    thinkTimeoutMs: ms(r.think_timeout_sec),
    retryCapMs: ms(retryCapSec(r.retry_backoff_sec, at, parsing)),
  };
  return {
    thinker: r.thinker,
    gate: Object.fromEntries(Object.entries(gate).filter(([, v]) => v !== undefined)),
    model: modelBlock(r.thinker, r.model, [...at, 'model'], parsing),
  };
};
