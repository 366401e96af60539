import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonSchemaOnce } from '../../src/mcp/json-schema-once.js';

const TARGET = { target: 'draft-2020-12' };

const fresh = () => z.object({ id: z.string().describe('The id.'), count: z.number().int().optional() });

describe('jsonSchemaOnce', () => {
  it('converts to the same JSON Schema zod gives, for input and output', () => {
    const schema = jsonSchemaOnce(fresh());
    const plain = fresh()['~standard'].jsonSchema;
    expect(schema['~standard'].jsonSchema.input(TARGET)).toEqual(plain.input(TARGET));
    expect(schema['~standard'].jsonSchema.output(TARGET)).toEqual(plain.output(TARGET));
  });

  it('converts once per target and hands out that one frozen result', () => {
    const schema = jsonSchemaOnce(fresh());
    const first = schema['~standard'].jsonSchema.output(TARGET);
    expect(schema['~standard'].jsonSchema.output(TARGET)).toBe(first);
    expect(schema['~standard'].jsonSchema.input(TARGET)).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen((first as { properties: object }).properties)).toBe(true);
  });

  it('is idempotent: wrapping again keeps the one cached result', () => {
    const schema = jsonSchemaOnce(fresh());
    const first = schema['~standard'].jsonSchema.output(TARGET);
    expect(jsonSchemaOnce(schema)['~standard'].jsonSchema.output(TARGET)).toBe(first);
  });

  it('still validates as the schema did', () => {
    const schema = jsonSchemaOnce(fresh());
    expect(schema.safeParse({ id: 'a' }).success).toBe(true);
    expect(schema.safeParse({ id: 1 }).success).toBe(false);
  });

  it('lists a tool with the same schemas as an unwrapped one', async () => {
    const listed = async (wrap: boolean) => {
      const server = new McpServer({ name: 't', version: '1' });
      const input = wrap ? jsonSchemaOnce(fresh()) : fresh();
      const output = wrap ? jsonSchemaOnce(fresh()) : fresh();
      server.registerTool('t', { inputSchema: input, outputSchema: output }, async () => ({
        content: [],
        structuredContent: { id: 'x' },
      }));
      return JSON.stringify([server.toolInputSchemaJson('t')]);
    };
    expect(await listed(true)).toBe(await listed(false));
  });
});
