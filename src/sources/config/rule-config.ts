import { z } from 'zod';
import { parsePath } from '../items/item-path.js';
import type { SourceRule } from './config.js';

/** The fixes for a rule's keys, merged into the source's. */
export const RULE_FIXES = {
  rules: 'Write rules as a list, e.g. "rules": [{"title_matches": "urgent|asap", "urgency": 0.9}].',
  title_matches:
    'Write a JavaScript regular expression; in JSON a backslash is written twice, e.g. "v\\\\d+".',
  starts_within_min: 'Write a number of minutes of 0 or more, e.g. "starts_within_min": 15.',
  field: 'Write a path into the item, e.g. "field": "fields.priority.name" (docs/sources.md#rules).',
  matches: 'Write a JavaScript regular expression, e.g. "matches": "^(High|Highest)$".',
  in: 'Write a list of values, e.g. "in": ["High", "Highest"].',
  equals: 'Write one value: text, a number, true, false or null, e.g. "equals": "review_requested".',
  gte: 'Write a number, e.g. "gte": 3.',
  lte: 'Write a number, e.g. "lte": 2.',
} as const;

const KINDS = ['title_matches', 'starts_within_min', 'field'] as const;
const TESTS = ['equals', 'in', 'matches', 'gte', 'lte'] as const;
const ONE_KIND_FIX =
  'Write one test per rule: {"title_matches": "<regex>", …}, {"starts_within_min": 15, …} or {"field": "<path>", "equals": …, …}.';
const ONE_TEST_FIX =
  'Give a field rule one test: "equals", "in", "matches", "gte" or "lte", e.g. {"field": "reason", "equals": "review_requested", "urgency": 0.9}.';

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const regexProblem = (pattern: string): string | null => {
  try {
    new RegExp(pattern);
    return null;
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message})`;
  }
};

const pathProblem = (path: string): string | null => {
  try {
    parsePath(path);
    return null;
  } catch (error) {
    return `is not a path: ${(error as Error).message}`;
  }
};

type RawRule = {
  title_matches?: string;
  starts_within_min?: number;
  field?: string;
  equals?: string | number | boolean | null;
  in?: (string | number | boolean | null)[];
  matches?: string;
  gte?: number;
  lte?: number;
  urgency: number;
};

type Problem = { path: string[]; message: string; fix: string };

const regexAt = (key: 'title_matches' | 'matches', pattern: string): Problem[] => {
  const message = regexProblem(pattern);
  return message === null ? [] : [{ path: [key], message, fix: RULE_FIXES[key] }];
};

const problemsOf = (rule: RawRule): Problem[] => {
  const kinds = KINDS.filter((kind) => rule[kind] !== undefined);
  if (kinds.length !== 1) {
    const message =
      kinds.length === 0
        ? 'has neither title_matches, starts_within_min nor field'
        : `has both ${kinds.join(' and ')}`;
    return [{ path: [], message, fix: ONE_KIND_FIX }];
  }
  const tests = TESTS.filter((test) => rule[test] !== undefined);
  if (kinds[0] !== 'field') {
    if (tests.length > 0)
      return [{ path: [tests[0]!], message: `"${tests[0]}" needs a "field" to test`, fix: RULE_FIXES.field }];
    return rule.title_matches === undefined ? [] : regexAt('title_matches', rule.title_matches);
  }
  if (tests.length !== 1) {
    const message = tests.length === 0 ? 'has a field but no test' : `has several tests: ${tests.join(', ')}`;
    return [{ path: [], message, fix: ONE_TEST_FIX }];
  }
  const path = pathProblem(rule.field!);
  if (path !== null) return [{ path: ['field'], message: path, fix: RULE_FIXES.field }];
  return rule.matches === undefined ? [] : regexAt('matches', rule.matches);
};

/** One rule of a source: exactly one test, checked (patterns compile, paths parse). */
export const ruleSchema = z
  .object({
    title_matches: z.string().optional(),
    starts_within_min: z.number().min(0).optional(),
    field: z.string().optional(),
    equals: scalar.optional(),
    in: z.array(scalar).min(1).optional(),
    matches: z.string().optional(),
    gte: z.number().optional(),
    lte: z.number().optional(),
    urgency: z.number().min(0).max(1),
  })
  .superRefine((rule, ctx) => {
    for (const { path, message, fix } of problemsOf(rule)) {
      ctx.addIssue({ code: 'custom', path, message, params: { fix } });
    }
  })
  .transform((rule): SourceRule => {
    const { urgency } = rule;
    if (rule.title_matches !== undefined) return { title_matches: rule.title_matches, urgency };
    if (rule.starts_within_min !== undefined) return { starts_within_min: rule.starts_within_min, urgency };
    const field = rule.field!;
    if (rule.equals !== undefined) return { field, equals: rule.equals, urgency };
    if (rule.in !== undefined) return { field, in: rule.in, urgency };
    if (rule.matches !== undefined) return { field, matches: rule.matches, urgency };
    if (rule.gte !== undefined) return { field, gte: rule.gte, urgency };
    return { field, lte: rule.lte!, urgency };
  });

/** The distinct paths a source's field rules test: what a poll keeps of each item for them. */
export const ruleFields = (rules: readonly SourceRule[]): string[] => [
  ...new Set(rules.flatMap((rule) => ('field' in rule ? [rule.field] : []))),
];
