import { cut } from './item-detail.js';
import { type PathStep, parsePath } from './item-path.js';

/**
 * The vendor-neutral conventions of docs/sources.md: where an item's id, title, start and link
 * usually are, and what counts as one of each.
 */

/** A path as written, with its parsed steps. */
export interface KnownPath {
  path: string;
  steps: PathStep[];
}

const known = (...paths: string[]): KnownPath[] => paths.map((path) => ({ path, steps: parsePath(path) }));

export const ID_PATHS = known(
  'id',
  'uid',
  'uuid',
  'key',
  'eventId',
  'messageId',
  'threadId',
  'requestId',
  'uri',
);
/** `subject.title` is GitHub's notifications, `fields.summary` Jira's REST issues, the header Gmail's. */
export const TITLE_PATHS = known(
  'title',
  'summary',
  'subject',
  'subject.title',
  'fields.summary',
  'payload.headers[name=Subject].value',
  'name',
  'description',
  'text',
  'snippet',
);
export const START_PATHS = known(
  'start',
  'startsAt',
  'start_time',
  'startTime',
  'starts_at',
  'date',
  'payload.headers[name=Date].value',
);
export const URL_PATHS = known(
  'html_url',
  'htmlLink',
  'permalink',
  'webLink',
  'web_url',
  'webUrl',
  'url',
  'link',
  'uri',
);

const TITLE_CHARS = 300;
const URL_CHARS = 2048;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** On one line, cut to `max` characters. */
export const oneLine = (text: string, max: number): string =>
  cut(
    // Only the head can be shown, so only the head is scanned: huge strings stay cheap.
    text
      .slice(0, max * 4)
      .replace(/\s+/g, ' ')
      .trim(),
    max,
  );

/** Text, or a finite number as text; never empty. */
export const idText = (value: unknown): string | null => {
  const id = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  return typeof id === 'string' && id !== '' ? id : null;
};

/** Text with something in it, on one line, cut to 300 characters. */
export const titleText = (value: unknown): string | null => {
  const title = typeof value === 'string' ? oneLine(value, TITLE_CHARS) : '';
  return title === '' ? null : title;
};

/** A four-digit year keeps Date.parse's leniency out: it reads "1" as 2001-01-01. */
const isoDate = (value: unknown): string | null => {
  if (typeof value !== 'string' || value.length > 100 || !/\d{4}/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
};

/** A date, as ISO 8601; Google Calendar writes `{dateTime}` for timed events and `{date}` for all-day ones. */
export const startText = (value: unknown): string | null =>
  isRecord(value) ? (isoDate(value.dateTime) ?? isoDate(value.date)) : isoDate(value);

/** An absolute URL, for the conventional places, where `url` is as often an API path. */
export const urlText = (value: unknown): string | null =>
  typeof value === 'string' && value.length <= URL_CHARS && URL.canParse(value) ? value : null;

/** Any text, for a path the user mapped to the link. */
export const mappedUrlText = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? oneLine(value, URL_CHARS) : null;
