import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InboxEvent } from '../../machines/external.js';
import { readJsonLines } from './files.js';

// What the daemon keeps under `.pulse/`, read back the way the crash tests judge it: the files
// as a kill left them, the inbox journal replayed, and the event log's own invariants.

/** The JSON-lines files of `.pulse/` that a kill can catch in the middle of an append. */
export const JOURNALS = ['events.jsonl', 'external_seen.jsonl', 'inbox.jsonl', 'dead-letters.jsonl'] as const;
export type Journal = (typeof JOURNALS)[number];

/** A JSON-lines file as a kill left it: the rows that parse, a torn last line, and any other broken line. */
export interface KilledJournal {
  rows: unknown[];
  /** The last line has no newline and does not parse: an append cut short. */
  torn: boolean;
  /** Lines other than a torn last one that do not parse: always a bug. */
  broken: string[];
}

export const readKilledJournal = async (path: string): Promise<KilledJournal> => {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const rows: unknown[] = [];
  const broken: string[] = [];
  const parse = (line: string) => {
    try {
      rows.push(JSON.parse(line));
      return true;
    } catch {
      return false;
    }
  };
  lines.forEach((line, index) => {
    if (line !== '' && !parse(line)) broken.push(`line ${index + 1}: ${line.slice(0, 120)}`);
  });
  const torn = last !== '' && !parse(last);
  return { rows, torn, broken };
};

/** Every journal of `.pulse/` and `state.json` as a kill left them. */
export const readPulseStore = async (project: string) => {
  const dir = join(project, '.pulse');
  const journals = {} as Record<Journal, KilledJournal>;
  for (const name of JOURNALS) journals[name] = await readKilledJournal(join(dir, name));
  const stateText = await readFile(join(dir, 'state.json'), 'utf8');
  let state: Record<string, unknown> | null = null;
  try {
    state = JSON.parse(stateText);
  } catch {}
  const problems: string[] = [];
  if (state === null) problems.push(`state.json does not parse: ${stateText.slice(0, 120)}`);
  for (const name of JOURNALS) {
    for (const line of journals[name].broken) problems.push(`${name}: ${line} does not parse`);
  }
  return {
    state,
    journals,
    /** The journals whose last line a kill tore (allowed: the next start repairs it). */
    torn: JOURNALS.filter((name) => journals[name].torn),
    problems,
  };
};

export type PulseStore = Awaited<ReturnType<typeof readPulseStore>>;

/** One row of `inbox.jsonl`. */
export interface InboxRow {
  op: 'insert' | 'remove' | 'attempts';
  event?: InboxEvent;
  ids?: string[];
  attempts?: Record<string, number>;
}

/** The journal's rows replayed: every insert, and the events still live (inserts minus removes), in order. */
export const replayInbox = (rows: readonly InboxRow[]) => {
  const live = new Map<string, InboxEvent>();
  const inserts: InboxEvent[] = [];
  for (const row of rows) {
    if (row.op === 'insert' && row.event) {
      live.set(row.event.id, row.event);
      inserts.push(row.event);
    } else if (row.op === 'remove') {
      for (const id of row.ids ?? []) live.delete(id);
    }
  }
  return { rows, inserts, live: [...live.values()] };
};

/** `.pulse/inbox.jsonl` replayed (a line that does not parse throws). */
export const readInbox = async (project: string) =>
  replayInbox(await readJsonLines<InboxRow>(join(project, '.pulse', 'inbox.jsonl')));

/** How many times each value occurs, for the values that occur more than once. */
export const repeated = (values: readonly string[]) => {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].filter(([, count]) => count > 1);
};

/** The fields of a logged event the log's invariants look at. */
interface LoggedChange {
  id: string;
  path: string;
  sha256: string | null;
}

/**
 * What is wrong with an event log: a duplicate id, ids out of creation order, or one change
 * logged twice (the same file with the same sha256 as its previous event).
 */
export const eventLogProblems = (events: readonly LoggedChange[]): string[] => {
  const problems: string[] = [];
  const ids = events.map((e) => e.id);
  for (const [id] of repeated(ids)) problems.push(`events.jsonl holds ${id} twice`);
  if (ids.some((id, i) => i > 0 && id <= ids[i - 1]!)) problems.push('event ids are not in creation order');
  const lastSha = new Map<string, string | null>();
  for (const event of events) {
    if (lastSha.has(event.path) && lastSha.get(event.path) === event.sha256) {
      problems.push(`${event.id} logs ${event.path} again with the same sha256 ${event.sha256}`);
    }
    lastSha.set(event.path, event.sha256);
  }
  return problems;
};
