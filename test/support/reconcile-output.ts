import type { ReconcileInput, ReconcileOutput } from '../../machines/event-log-context.js';

/** What a scan that found nothing new and nothing wrong returns, for fake reconcilers. */
export const nothingFound = (input: ReconcileInput): ReconcileOutput => ({
  files: input.files,
  events: [],
  deferred: false,
  folder: null,
  unreadable: {},
  away: [],
  appendError: null,
  hashesSaved: null,
  stateError: null,
});
