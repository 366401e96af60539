import { z } from 'zod';
import type { SourceConfig } from './config.js';
import {
  type Fixes,
  isRecord,
  MAX_TIMER_SEC,
  type Parsing,
  type Path,
  parseWith,
  warnUnknownKeys,
} from './config-parsing.js';
import { MAP_FIXES, mapSchema } from './map-config.js';
import { RULE_FIXES, ruleFields, ruleSchema } from './rule-config.js';

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
  allow_side_effects:
    'Write true only for a tool whose side effects you want repeated every interval; leave it out otherwise.',
  urgency: 'Write a number from 0 to 1, e.g. "urgency": 0.5.',
  ...RULE_FIXES,
  ...MAP_FIXES,
};

/** Each field rule's values are kept with every item of the source: a bound on what that costs. */
const MAX_RULE_FIELDS = 20;

const nestsDeeperThan = (value: unknown, levels: number): boolean => {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  return Object.values(value).some((child) => nestsDeeperThan(child, levels - 1));
};

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
  allow_side_effects: z.boolean().default(false),
  urgency: urgency.default(0.5),
  rules: z
    .array(ruleSchema)
    .default([])
    .refine((rules) => ruleFields(rules).length <= MAX_RULE_FIELDS, {
      message: `tests more than ${MAX_RULE_FIELDS} different fields`,
      params: { fix: 'Test fewer paths: each one is kept with every item of the source.' },
    }),
  map: mapSchema.optional(),
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
    allowSideEffects: source.allow_side_effects,
    urgency: source.urgency,
    rules: source.rules,
    ...(source.map === undefined ? {} : { map: source.map }),
  };
};
