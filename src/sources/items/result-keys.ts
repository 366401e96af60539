import type { KeysFound } from '../../../machines/sources-context.js';
import { isRecord } from '../config/config-parsing.js';

/** Enough to see a shape; a result with more is cut, and says so. */
const MAX_BLOCKS = 20;
const MAX_KEYS = 100;
/** Longer texts are not parsed again here: the extraction has said what it made of them. */
const MAX_PARSED_CHARS = 16 * 1024 * 1024;

const keysOf = (value: Record<string, unknown>) => {
  const keys = Object.keys(value);
  return keys.length > MAX_KEYS ? [...keys.slice(0, MAX_KEYS), `… ${keys.length - MAX_KEYS} more`] : keys;
};

/** The keys of an object, or of an array's first object element, at one place. */
const keysAt = (where: string, value: unknown): KeysFound => {
  if (isRecord(value)) return { where, keys: keysOf(value) };
  if (Array.isArray(value)) {
    const first = value.find(isRecord);
    const of = first === undefined ? 'no object in it' : 'keys of its first object';
    return { where: `${where} (an array of ${value.length}; ${of})`, keys: first ? keysOf(first) : [] };
  }
  return { where: `${where} (${value === null ? 'null' : typeof value}, no keys)`, keys: [] };
};

const textJson = (text: string): unknown => {
  if (text.length > MAX_PARSED_CHARS || !/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const blockKeys = (block: unknown, index: number): KeysFound => {
  const where = `content[${index}]`;
  if (!isRecord(block)) return keysAt(where, block);
  if (block.type !== 'text' || typeof block.text !== 'string')
    return { where: `${where}, a ${JSON.stringify(String(block.type))} block`, keys: keysOf(block) };
  const json = textJson(block.text);
  return json === undefined
    ? { where: `${where} text (not JSON)`, keys: [] }
    : keysAt(`${where} text JSON`, json);
};

/**
 * The keys found in a tool's answer: at its top level, in `structuredContent`, and in each
 * content block (a text block's JSON, or the block itself), so a `map` can be written from them.
 */
export const keysFound = (result: unknown): KeysFound[] => {
  if (!isRecord(result)) return [keysAt('the top level', result)];
  const found = [keysAt('the top level', result)];
  if (result.structuredContent !== undefined)
    found.push(keysAt('structuredContent', result.structuredContent));
  const blocks = Array.isArray(result.content) ? result.content : [];
  found.push(...blocks.slice(0, MAX_BLOCKS).map(blockKeys));
  if (blocks.length > MAX_BLOCKS)
    found.push({ where: `content[${MAX_BLOCKS}…${blocks.length - 1}] (not shown)`, keys: [] });
  return found;
};
