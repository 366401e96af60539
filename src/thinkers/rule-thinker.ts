import type { InboxEvent } from '../../machines/external.js';
import type { Judgement } from '../../machines/gate.js';
import type { SourceConfig, SourceRule } from '../sources/config.js';
import type { Thinker } from './thinker.js';

export const DEFAULT_URGENCY = 0.5;

type Matcher = { urgency: number; matches(event: InboxEvent, now: number): boolean };

const matcher = (rule: SourceRule): Matcher => {
  if ('title_matches' in rule) {
    // Case-insensitive: a rule "urgent|asap" should match "URGENT: …". The config validated the pattern.
    const pattern = new RegExp(rule.title_matches, 'i');
    return { urgency: rule.urgency, matches: (event) => pattern.test(event.title) };
  }
  const windowMs = rule.starts_within_min * 60_000;
  return {
    urgency: rule.urgency,
    matches: (event, now) => {
      if (event.starts_at === null) return false;
      const startsAt = Date.parse(event.starts_at);
      return Number.isFinite(startsAt) && startsAt >= now && startsAt - now <= windowMs;
    },
  };
};

/**
 * The default thinker, with no LLM: an event's urgency is its source's `urgency` (0.5 when the
 * source is unknown), replaced by the urgency of the **last** rule that matches it, so a source
 * lists rules from general to specific. `starts_within_min` matches an item whose `starts_at` is
 * between now and N minutes from now; `title_matches` is a case-insensitive regular expression.
 */
export const createRuleThinker = (
  sources: readonly Pick<SourceConfig, 'name' | 'urgency' | 'rules'>[],
): Thinker => {
  const bySource = new Map(
    sources.map((source) => [source.name, { urgency: source.urgency, rules: source.rules.map(matcher) }]),
  );
  return {
    async think(events, now): Promise<Judgement[]> {
      return events.map((event) => {
        const source = bySource.get(event.source);
        let urgency = source?.urgency ?? DEFAULT_URGENCY;
        for (const rule of source?.rules ?? []) if (rule.matches(event, now)) urgency = rule.urgency;
        return { id: event.id, urgency };
      });
    },
  };
};
