import type { SourcesConfig } from '../sources/config.js';
import { createRuleThinker } from './rule-thinker.js';
import type { Thinker } from './thinker.js';

/**
 * The thinker `sources.json` asks for. Both judge by the sources' urgency and rules; with
 * `"thinker": "agent"` the config sets the threshold to 0, so every event reaches the agent,
 * the urgency is only a hint for ordering, and the agent's outcomes in `pulse_ack_events`
 * (told, not_worth_saying, later) are the judgement.
 */
export const createThinker = (config: Pick<SourcesConfig, 'sources'> | null): Thinker =>
  createRuleThinker(config?.sources ?? []);
