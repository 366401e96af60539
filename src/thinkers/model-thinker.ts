import type { Judgement } from '../../machines/delivery-rules.js';
import type { InboxEvent } from '../../machines/external.js';
import type { ModelConfig } from '../sources/config/model-config.js';
import { askChatCompletions, type Prompt } from './chat-completions.js';
import { readJudgements } from './judgement-answer.js';
import { eventsMessage, SYSTEM_PROMPT } from './think-prompt.js';
import type { Thinker } from './thinker.js';

/** Sends one prompt and resolves to the model's text. */
export type Ask = (prompt: Prompt) => Promise<string>;

/** `events` in runs of at most `size`, in order. */
export const chunks = <T>(events: readonly T[], size: number): T[][] => {
  const runs: T[][] = [];
  for (let i = 0; i < events.length; i += size) runs.push(events.slice(i, i + size));
  return runs;
};

/**
 * A thinker that asks a model: one request per run of `maxEvents` events (one per reflection,
 * unless a backlog has built up), each event judged by id. A run whose request fails leaves its
 * events unjudged: they go back to the inbox with one more attempt, while the other runs count.
 * When no run is judged, the thought fails with the first error.
 */
export const createAskingThinker = (ask: Ask, maxEvents: number): Thinker => ({
  async think(events: InboxEvent[], now: number): Promise<Judgement[]> {
    const judged: Judgement[] = [];
    const errors: unknown[] = [];
    for (const run of chunks(events, maxEvents)) {
      try {
        const text = await ask({ system: SYSTEM_PROMPT, user: eventsMessage(run, now) });
        judged.push(
          ...readJudgements(
            text,
            run.map((e) => e.id),
          ),
        );
      } catch (error) {
        errors.push(error);
      }
    }
    if (judged.length === 0 && errors.length > 0) throw errors[0];
    return judged;
  },
});

/** The model thinker of `"thinker": "model"`: an OpenAI-compatible Chat Completions endpoint. */
export const createModelThinker = (config: ModelConfig): Thinker =>
  createAskingThinker((prompt) => askChatCompletions(config, prompt), config.maxEvents);
