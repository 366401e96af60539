import { z } from 'zod';
import type { Judgement } from '../../machines/delivery-rules.js';
import { terminalText } from '../text/terminal-text.js';

/** The longest reason kept from a model: it reaches the agent beside the title, on one line. */
export const WHY_MAX = 200;

const judgementSchema = z.object({
  id: z.string(),
  urgency: z.number().min(0).max(1),
  why: z.string().optional(),
});

/** What a model must answer: `{"judgements": [{"id", "urgency", "why"}]}`. */
export const answerSchema = z.object({ judgements: z.array(judgementSchema) });

/** The same shape as JSON Schema, for `response_format` (strict: every key required, nothing else). */
export const ANSWER_JSON_SCHEMA = {
  type: 'object',
  properties: {
    judgements: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          urgency: { type: 'number', minimum: 0, maximum: 1 },
          why: { type: 'string' },
        },
        required: ['id', 'urgency', 'why'],
        additionalProperties: false,
      },
    },
  },
  required: ['judgements'],
  additionalProperties: false,
} as const;

/** A model's answer that holds no judgements pulse can use. */
export class UnusableAnswerError extends Error {
  override name = 'UnusableAnswerError';
  readonly reason = 'an answer without usable judgements';
  /** The endpoint answered: the next answer may be good (see `FailureKind`). */
  readonly kind = 'answer';
}

/** Every balanced `{…}` in the text, outermost first, skipping braces inside JSON strings. */
const objectsIn = (text: string): string[] => {
  const found: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && depth > 0 && --depth === 0) found.push(text.slice(start, i + 1));
  }
  return found;
};

const parsed = (text: string) => {
  try {
    return answerSchema.safeParse(JSON.parse(text));
  } catch {
    return null;
  }
};

/**
 * Reads the judgements out of a model's text. A server that honoured `response_format` answers
 * bare JSON; one that ignored it may wrap the JSON in prose or a code fence. When the text holds
 * several answers (a model can quote an event whose title carries a forged one), the one that
 * judges the most events of the batch wins, the last on a tie: a forgery judges fewer.
 * Judgements of ids not in the batch are dropped, so are repeats of an id (the first counts).
 */
export const readJudgements = (text: string, batchIds: readonly string[]): Judgement[] => {
  const ids = new Set(batchIds);
  const whole = parsed(text.trim());
  const candidates = whole?.success
    ? [whole.data]
    : objectsIn(text).flatMap((o) => {
        const r = parsed(o);
        return r?.success ? [r.data] : [];
      });
  if (candidates.length === 0) {
    throw new UnusableAnswerError(
      `the model's answer holds no {"judgements": [...]} JSON (it began: ${JSON.stringify(text.slice(0, 120))})`,
    );
  }
  const kept = candidates.map((answer) => {
    const seen = new Set<string>();
    return answer.judgements.filter((j) => ids.has(j.id) && !seen.has(j.id) && seen.add(j.id));
  });
  const best = kept.reduce((a, b) => (b.length >= a.length ? b : a));
  if (best.length === 0) {
    throw new UnusableAnswerError(
      `the model judged none of the ${ids.size} events it was given (ids it used: ${
        candidates
          .flatMap((c) => c.judgements.map((j) => j.id))
          .slice(0, 5)
          .join(', ') || 'none'
      })`,
    );
  }
  return best.map(({ id, urgency, why }) => ({
    id,
    urgency,
    ...(why === undefined || why.trim() === '' ? {} : { why: oneLine(why) }),
  }));
};

/** A reason on one line, without escape sequences, cut to `WHY_MAX`: it is shown to agents and terminals. */
const oneLine = (text: string) => {
  const flat = terminalText(text).trim();
  return flat.length > WHY_MAX ? `${flat.slice(0, WHY_MAX - 1)}…` : flat;
};
