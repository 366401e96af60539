import { z } from 'zod';
import type { SourceConfig, SourceRule } from './config.js';
import {
  type Fixes,
  isRecord,
  MAX_TIMER_SEC,
  type Parsing,
  type Path,
  parseWith,
  warnUnknownKeys,
} from './config-parsing.js';

const MAX_ARGS_DEPTH = 64;

const seconds = (min: number) => z.number().min(min).max(MAX_TIMER_SEC);
const urgency = z.number().min(0).max(1);

const SOURCE_FIXES: Fixes = {
  sources:
    'Write each source as an object, e.g. {"name": "cal-upcoming", "server": "cal", "tool": "list_events"}.',
  name: 'Give the source a name of its own, e.g. "name": "cal-upcoming".',
  server: 'Name a server of mcpServers, e.g. "server": "cal".',
  tool: 'Name the tool to call, e.g. "tool": "list_events".',
  args: 'Write the tool\'s arguments as a JSON object, e.g. "args": {"max_results": 10}.',
  interval_sec: `Write a number of seconds from 1 to ${MAX_TIMER_SEC}, e.g. "interval_sec": 300.`,
  enabled: 'Write true or false.',
  urgency: 'Write a number from 0 to 1, e.g. "urgency": 0.5.',
  rules: 'Write rules as a list, e.g. "rules": [{"title_matches": "urgent|asap", "urgency": 0.9}].',
  title_matches:
    'Write a JavaScript regular expression; in JSON a backslash is written twice, e.g. "v\\\\d+".',
  starts_within_min: 'Write a number of minutes of 0 or more, e.g. "starts_within_min": 15.',
};

const nestsDeeperThan = (value: unknown, levels: number): boolean => {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  return Object.values(value).some((child) => nestsDeeperThan(child, levels - 1));
};

const ruleSchema = z
  .object({
    title_matches: z.string().optional(),
    starts_within_min: z.number().min(0).optional(),
    urgency,
  })
  .superRefine((rule, ctx) => {
    const hasTitle = rule.title_matches !== undefined;
    if (hasTitle === (rule.starts_within_min !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: hasTitle
          ? 'has both title_matches and starts_within_min'
          : 'has neither title_matches nor starts_within_min',
        params: {
          fix: 'Write one test a rule: {"title_matches": "<regex>", …} or {"starts_within_min": 15, …}.',
        },
      });
      return;
    }
    if (!hasTitle) return;
    try {
      new RegExp(rule.title_matches!);
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        path: ['title_matches'],
        message: `is not a valid regular expression (${(error as Error).message})`,
        params: { fix: SOURCE_FIXES.title_matches },
      });
    }
  })
  .transform(
    ({ title_matches, starts_within_min, urgency }): SourceRule =>
      title_matches === undefined
        ? { starts_within_min: starts_within_min!, urgency }
        : { title_matches, urgency },
  );

const sourceSchema = z.object({
  name: z.string().min(1),
  server: z.string().min(1),
  tool: z.string().min(1),
  args: z
    .record(z.string(), z.unknown())
    .refine((args) => !nestsDeeperThan(args, MAX_ARGS_DEPTH), {
      message: `nests deeper than ${MAX_ARGS_DEPTH} levels`,
      params: { fix: 'Tools take plain JSON arguments: flatten args.' },
    })
    .default({}),
  interval_sec: seconds(1).default(300),
  enabled: z.boolean().default(true),
  urgency: urgency.default(0.5),
  rules: z.array(ruleSchema).default([]),
});

/** Validates one entry of sources, with defaults filled in and its rules checked. */
export const sourceOf = (raw: unknown, at: Path, parsing: Parsing): SourceConfig => {
  if (isRecord(raw)) warnUnknownKeys(raw, sourceSchema.shape, at, parsing, 'a source');
  const source = parseWith(sourceSchema, raw, at, parsing, SOURCE_FIXES);
  return {
    name: source.name,
    server: source.server,
    tool: source.tool,
    args: source.args,
    intervalMs: Math.round(source.interval_sec * 1000),
    enabled: source.enabled,
    urgency: source.urgency,
    rules: source.rules,
  };
};
