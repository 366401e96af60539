import type { Judgement } from '../../machines/delivery-rules.js';
import type { FieldValue, InboxEvent } from '../../machines/external.js';
import type { SourceConfig, SourceRule } from '../sources/config/config.js';
import type { Thinker } from './thinker.js';

export const DEFAULT_URGENCY = 0.5;

type Matcher = { urgency: number; matches(event: InboxEvent, now: number): boolean };

/** Compared as text, so `"equals": 1` matches the "1" a JSON API writes, and null only matches null. */
const sameValue = (actual: FieldValue, wanted: FieldValue) =>
  actual === null || wanted === null ? actual === wanted : String(actual) === String(wanted);

const asNumber = (value: FieldValue): number | null => {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
};

/** Tests the value a field rule names; an event without it (absent from the item, or polled before the rule) never matches. */
const fieldTest = (rule: Extract<SourceRule, { field: string }>): ((value: FieldValue) => boolean) => {
  if ('equals' in rule) return (value) => sameValue(value, rule.equals);
  if ('in' in rule) return (value) => rule.in.some((wanted) => sameValue(value, wanted));
  if ('matches' in rule) {
    const pattern = new RegExp(rule.matches, 'i');
    return (value) => value !== null && pattern.test(String(value));
  }
  if ('gte' in rule) return (value) => (asNumber(value) ?? Number.NaN) >= rule.gte;
  return (value) => (asNumber(value) ?? Number.NaN) <= rule.lte;
};

const matcher = (rule: SourceRule): Matcher => {
  if ('title_matches' in rule) {
    // Case-insensitive: a rule "urgent|asap" should match "URGENT: …". The config validated the pattern.
    const pattern = new RegExp(rule.title_matches, 'i');
    return { urgency: rule.urgency, matches: (event) => pattern.test(event.title) };
  }
  if ('field' in rule) {
    const test = fieldTest(rule);
    return {
      urgency: rule.urgency,
      matches: (event) => {
        const fields = event.fields ?? {};
        return Object.hasOwn(fields, rule.field) && test(fields[rule.field]!);
      },
    };
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
 * between now and N minutes from now; `title_matches` is a case-insensitive regular expression;
 * a `field` rule tests the value the poll kept at that path (`equals`, `in`, `matches`, `gte`, `lte`).
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
