import type { SourcesConfig } from '../sources/config/config.js';
import { MODEL_DEFAULTS } from '../sources/config/model-config.js';
import { createModelThinker } from './model-thinker.js';
import { createRuleThinker } from './rule-thinker.js';
import type { SamplingClients } from './sampling-clients.js';
import { createSamplingThinker } from './sampling-thinker.js';
import type { Thinker } from './thinker.js';
import { judgeOf } from './thinker-in-force.js';

/** The thinker for one thought, and how status names it. */
export interface ChosenThinker {
  thinker: Thinker;
  by: string;
  /** Why it is not the thinker the config asks for. */
  note: string | null;
}

/**
 * The thinker `sources.json` asks for, chosen again at each thought. The rule thinker judges by
 * the sources' urgency and rules; with `"thinker": "agent"` the config sets the threshold to 0,
 * so every event reaches the agent and its outcomes in `pulse_ack_events` are the judgement.
 * `"model"` asks an OpenAI-compatible endpoint; `"sampling"` asks the most recently connected
 * agent that can sample, and falls back to the rules (saying so) while none is connected.
 */
export const chooseThinker = (
  config: Pick<SourcesConfig, 'sources' | 'reflection'> | null,
  { samplers, timeoutMs }: { samplers?: SamplingClients; timeoutMs: number },
): ChosenThinker => {
  const rules = createRuleThinker(config?.sources ?? []);
  const model = config?.reflection.model ?? null;
  const sampler = samplers?.latest() ?? null;
  const setting = { kind: config?.reflection.thinker ?? 'rules', model: model?.model ?? null } as const;
  const { by, note } = judgeOf(setting, sampler?.client ?? null);
  if (setting.kind === 'model' && model !== null) return { thinker: createModelThinker(model), by, note };
  if (setting.kind === 'sampling' && sampler !== null)
    return {
      thinker: createSamplingThinker(sampler, { timeoutMs, maxEvents: MODEL_DEFAULTS.max_events }),
      by,
      note,
    };
  return { thinker: rules, by, note };
};
