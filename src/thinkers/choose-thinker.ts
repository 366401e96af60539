import type { SamplingClients } from '../mcp/sampling-clients.js';
import type { SourcesConfig } from '../sources/config/config.js';
import { MODEL_DEFAULTS } from '../sources/config/model-config.js';
import { createModelThinker } from './model-thinker.js';
import { createRuleThinker } from './rule-thinker.js';
import { createSamplingThinker } from './sampling-thinker.js';
import type { Thinker } from './thinker.js';

/** The thinker for one thought, and how status names it. */
export interface ChosenThinker {
  thinker: Thinker;
  by: string;
  /** Why it is not the thinker the config asks for. */
  note: string | null;
}

export const NO_SAMPLING_CLIENT =
  'no connected MCP client declared the sampling capability: the rule thinker judged instead';

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
  switch (config?.reflection.thinker) {
    case 'model':
      if (model !== null)
        return {
          thinker: createModelThinker(model),
          by: `model ${model.model}`,
          note: null,
        };
      break;
    case 'sampling': {
      const sampler = samplers?.latest() ?? null;
      if (sampler === null) return { thinker: rules, by: 'rules', note: NO_SAMPLING_CLIENT };
      return {
        thinker: createSamplingThinker(sampler, { timeoutMs, maxEvents: MODEL_DEFAULTS.max_events }),
        by: `sampling (${sampler.client})`,
        note: null,
      };
    }
    case 'agent':
      return { thinker: rules, by: 'agent (rules order the events)', note: null };
  }
  return { thinker: rules, by: 'rules', note: null };
};
