import type { z } from 'zod';

type Convert = (options?: {
  target?: string;
  libraryOptions?: Record<string, unknown>;
}) => Record<string, unknown>;

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
};

/** The schemas already converting once, so wrapping one again (a server per request) changes nothing. */
const wrapped = new WeakSet<z.ZodType>();

const once = (convert: Convert): Convert => {
  const byTarget = new Map<string, Record<string, unknown>>();
  return (options) => {
    // Library options change the output and are never passed by the SDK: convert those anew.
    if (options?.libraryOptions !== undefined) return convert(options);
    const key = options?.target ?? '';
    let json = byTarget.get(key);
    if (json === undefined) {
      // Frozen, as every server shares it: a caller that wrote into it would throw, not change the next answer.
      json = deepFreeze(convert(options));
      byTarget.set(key, json);
    }
    return json;
  };
};

/**
 * Makes `schema` convert to JSON Schema once and hand out that one (frozen) result from then on.
 * The SDK converts a tool's schemas per server (the input one for each 2026-07-28 `tools/call`,
 * the output one for each call's result), and pulse builds a server per one-shot and 2026-07-28
 * request: zod's conversion was a fifth of such a call. Idempotent; returns the same schema.
 */
export const jsonSchemaOnce = <S extends z.ZodType>(schema: S): S => {
  if (wrapped.has(schema)) return schema;
  wrapped.add(schema);
  const standard = schema['~standard'];
  schema['~standard'] = {
    ...standard,
    jsonSchema: {
      input: once(standard.jsonSchema.input as Convert),
      output: once(standard.jsonSchema.output as Convert),
    },
  } as typeof standard;
  return schema;
};
