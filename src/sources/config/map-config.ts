import { z } from 'zod';
import { parsePath } from '../items/item-path.js';
import type { ItemMap } from './config.js';

/** The fixes for a map's keys, merged into the source's. */
export const MAP_FIXES = {
  map: 'Write map as an object of paths under the keys items, id, title, starts_at, url and detail, e.g. "map": {"items": "entities", "id": "name", "title": "name"} (docs/sources.md#map).',
  items: 'Write the path to the list, e.g. "items": "issues" or "items": "data.search.nodes".',
  id: 'Write a path, or a list of paths joined into one id, e.g. "id": ["repository.full_name", "number"].',
  title: 'Write a path into the item, e.g. "title": "subject.title".',
  starts_at: 'Write a path to a date, e.g. "starts_at": "start.dateTime".',
  url: 'Write a path to a link, e.g. "url": "html_url".',
  detail: 'Write a path into the item, e.g. "detail": "body".',
} as const;

const MAX_ID_PATHS = 8;

const path = z.string().superRefine((text, ctx) => {
  try {
    parsePath(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `is not a path: ${(error as Error).message}` });
  }
});

/** A source's `map`: paths only, each checked; an unknown key is an error, not a silent "(untitled)". */
export const mapSchema = z
  .object({
    items: path.optional(),
    id: z.union([path, z.array(path).min(1).max(MAX_ID_PATHS)]).optional(),
    title: path.optional(),
    starts_at: path.optional(),
    url: path.optional(),
    detail: path.optional(),
  })
  .strict() satisfies z.ZodType<ItemMap>;
