import { createHash } from 'node:crypto';
import type { ExternalItem } from '../../../machines/external.js';
import type { ItemMap } from '../config/config.js';
import { canonicalJson } from './canonical-json.js';
import { conventionalList, describeResult, LIST_FIELDS, mappedList, textsOf } from './find-list.js';
import {
  ID_PATHS,
  idText,
  type KnownPath,
  mappedUrlText,
  oneLine,
  START_PATHS,
  startText,
  TITLE_PATHS,
  titleText,
  URL_PATHS,
  urlText,
} from './item-conventions.js';
import { detailOf, type PickedField } from './item-detail.js';
import { fieldPathsOf, fieldValues } from './item-fields.js';
import { describeMiss, parsePath, valueAt } from './item-path.js';

/** One item a source listed, reduced to what the inbox and the thinker need; extraction always reads a url and fields. */
export type ExtractedItem = Required<ExternalItem>;

/** A tool result with no items to read; the message says what was wrong. */
export class ExtractError extends Error {
  override name = 'ExtractError';
}

/** What a source says about reading its tool's answer: its map, and the paths its rules test. */
export interface ItemReading {
  map?: ItemMap | undefined;
  fields?: readonly string[];
}

const MAX_ITEMS = 10_000;
/** Longer ids are hashed, so a garbage id cannot bloat the seen store. */
const ID_CHARS = 256;
const ID_JOINER = ':';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The first of `paths` whose value `read` accepts, with that path. */
const firstOf = <T>(
  item: Json,
  paths: readonly KnownPath[],
  read: (value: unknown) => T | null,
): { found: KnownPath; value: unknown; read: T } | null => {
  for (const found of paths) {
    const value = valueAt(item, found.steps);
    const text = value === undefined ? null : read(value);
    if (text !== null) return { found, value, read: text };
  }
  return null;
};

interface CompiledMap {
  id: KnownPath[] | null;
  title: KnownPath | null;
  startsAt: KnownPath | null;
  url: KnownPath | null;
  detail: KnownPath | null;
}

const compiled = (path: string | undefined): KnownPath | null =>
  path === undefined ? null : { path, steps: parsePath(path) };

const compileMap = (map: ItemMap | undefined): CompiledMap => ({
  id:
    map?.id === undefined ? null : (Array.isArray(map.id) ? map.id : [map.id]).map((path) => compiled(path)!),
  title: compiled(map?.title),
  startsAt: compiled(map?.starts_at),
  url: compiled(map?.url),
  detail: compiled(map?.detail),
});

/** The mapped id: every path's value, joined; null when any is missing. */
const mappedId = (item: Json, paths: readonly KnownPath[]): string | null => {
  const parts = paths.map((path) => idText(valueAt(item, path.steps)));
  return parts.every((part) => part !== null) ? parts.join(ID_JOINER) : null;
};

/** The map's fields that read something in at least one item; a field that reads nothing anywhere is an error. */
type MapHits = Record<'id' | 'title' | 'starts_at' | 'url' | 'detail', boolean>;

const NO_HITS: MapHits = { id: false, title: false, starts_at: false, url: false, detail: false };

const boundedId = (id: string) => (id.length > ID_CHARS ? `sha256:${sha256(id)}` : id);

/**
 * `name` identifies items without an id only where it is unique in the list (server-memory's
 * entities); elsewhere two items of one name would be taken for one.
 */
const namesAreIds = (items: readonly Json[], map: CompiledMap): boolean => {
  const names = new Set<string>();
  for (const item of items) {
    if ((map.id !== null && mappedId(item, map.id) !== null) || firstOf(item, ID_PATHS, idText)) continue;
    const name = idText(item.name);
    if (name === null || names.has(name)) return false;
    names.add(name);
  }
  return true;
};

const itemOf = (
  item: Json,
  map: CompiledMap,
  names: boolean,
  fields: ReturnType<typeof fieldPathsOf>,
  hits: MapHits,
): ExtractedItem => {
  const picked: PickedField[] = [];
  const pick = (path: KnownPath, value: unknown) =>
    picked.push({ path: path.path, steps: path.steps, value });

  const idFromMap = map.id === null ? null : mappedId(item, map.id);
  if (idFromMap !== null) hits.id = true;
  const id = idFromMap ?? firstOf(item, ID_PATHS, idText)?.read ?? (names ? idText(item.name) : null) ?? null;

  const titleValue = map.title === null ? undefined : valueAt(item, map.title.steps);
  const titleFromMap = titleText(titleValue);
  if (titleFromMap !== null) {
    hits.title = true;
    pick(map.title!, titleValue);
  }
  const titleByConvention = titleFromMap === null ? firstOf(item, TITLE_PATHS, titleText) : null;
  if (titleByConvention !== null) pick(titleByConvention.found, titleByConvention.value);

  const startValue = map.startsAt === null ? undefined : valueAt(item, map.startsAt.steps);
  const startFromMap = startText(startValue);
  if (startFromMap !== null) {
    hits.starts_at = true;
    pick(map.startsAt!, startValue);
  }
  const startByConvention = startFromMap === null ? firstOf(item, START_PATHS, startText) : null;
  if (startByConvention !== null) pick(startByConvention.found, startByConvention.value);

  const urlFromMap = map.url === null ? null : mappedUrlText(valueAt(item, map.url.steps));
  if (urlFromMap !== null) hits.url = true;

  if (map.detail !== null) {
    const detail = valueAt(item, map.detail.steps);
    if (detail !== undefined && detail !== null) {
      hits.detail = true;
      pick(map.detail, detail);
    }
  }

  return {
    itemId: boundedId(id ?? sha256(canonicalJson(item))),
    title: titleFromMap ?? titleByConvention?.read ?? '(untitled)',
    startsAt: startFromMap ?? startByConvention?.read ?? null,
    url: urlFromMap ?? firstOf(item, URL_PATHS, urlText)?.read ?? null,
    detail: detailOf(item, picked),
    fields: fieldValues(item, fields),
  };
};

/** A map field that read nothing in any item: the path, and what the first item holds there. */
const checkHits = (map: CompiledMap, hits: MapHits, first: Json) => {
  const mapped: [keyof MapHits, KnownPath[] | KnownPath | null][] = [
    ['id', map.id],
    ['title', map.title],
    ['starts_at', map.startsAt],
    ['url', map.url],
    ['detail', map.detail],
  ];
  for (const [key, paths] of mapped) {
    if (paths === null || hits[key]) continue;
    const all = Array.isArray(paths) ? paths : [paths];
    const missing = all.find((path) => valueAt(first, path.steps) === undefined) ?? all[0]!;
    const found = valueAt(first, missing.steps);
    const why = found === undefined ? describeMiss(first, missing.steps) : 'its value is not usable there';
    const usable = key === 'starts_at' ? ' as a date' : key === 'detail' ? '' : ' as text';
    throw new ExtractError(
      `map.${key} "${missing.path}" reads nothing${usable} in any item: in the first item, ${why}. Fix the path in the source's "map" (docs/sources.md#map).`,
    );
  }
};

/**
 * Reads the items of a `tools/call` result: by the source's `map` where it has one, by the
 * conventions of docs/sources.md for the rest. Throws an ExtractError when the tool reported
 * an error, when no list is found, or when a mapped path reads nothing in any item; the
 * message names the path and what is there instead.
 */
export const extractItems = (result: unknown, reading: ItemReading = {}): ExtractedItem[] => {
  if (!isRecord(result)) {
    const got = result === null ? 'null' : Array.isArray(result) ? 'an array' : typeof result;
    throw new ExtractError(`the tool result is not an object (got ${got})`);
  }
  if (result.isError === true) {
    const text = oneLine(textsOf(result)[0] ?? '', 200);
    throw new ExtractError(`the tool answered isError: ${text || '(no text)'}`);
  }
  const map = compileMap(reading.map);
  const itemsPath = reading.map?.items;
  const found =
    itemsPath === undefined
      ? conventionalList(result, (value) => firstOf(value, ID_PATHS, idText) !== null)
      : mappedList(result, parsePath(itemsPath));
  if (typeof found === 'string') throw new ExtractError(found);
  if (found === null) {
    throw new ExtractError(
      `no list found: ${describeResult(result)}. pulse looks for a JSON array, a field ${LIST_FIELDS.join(', ')}, or the first list of objects; add "map": {"items": "<path to the list>"} to the source (docs/sources.md#map)`,
    );
  }
  const records = found.filter(isRecord).slice(0, MAX_ITEMS);
  const names = namesAreIds(records, map);
  const fields = fieldPathsOf(reading.fields ?? []);
  const hits = { ...NO_HITS };
  const items = records.map((record) => itemOf(record, map, names, fields, hits));
  if (records.length > 0) checkHits(map, hits, records[0]!);
  return items;
};
