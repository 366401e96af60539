import type { ServerSummary } from '../../machines/sources-context.js';
import { isRecord } from '../sources/config/config-parsing.js';
import { httpSummary, stdioSummary } from '../sources/config/server-summary.js';
import { variableReferences } from '../sources/config/variables.js';

/** What a sources.json would run, connect to, read from the environment and send, read as written (nothing expanded). */
export interface TrustView {
  /** Each server, as status shows it, with its cwd; `disabled` is left null. */
  servers: (ServerSummary & { cwd: string | null })[];
  /** The model endpoint's URL as written (`"thinker": "model"`), or null. */
  model: string | null;
  /** Every `${VAR}` the file would expand, by name. */
  variables: string[];
  /** Why the file cannot be read as sources.json, or null: trusting it then only lets pulse report its errors. */
  unreadable: string | null;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

const stringRecord = (value: unknown): Record<string, string> =>
  isRecord(value) ? Object.fromEntries(Object.entries(value).map(([key, v]) => [key, String(v)])) : {};

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** One entry of mcpServers as written, whatever its shape, so a broken entry is still shown. */
const serverView = (name: string, raw: Record<string, unknown>): TrustView['servers'][number] => {
  const timeout_sec = typeof raw.timeout_sec === 'number' ? raw.timeout_sec : 0;
  if (raw.command !== undefined)
    return {
      ...stdioSummary(
        name,
        { command: String(raw.command), args: strings(raw.args), env: stringRecord(raw.env), timeout_sec },
        null,
      ),
      cwd: text(raw.cwd) ?? null,
    };
  return {
    ...httpSummary(
      name,
      {
        url: String(raw.url),
        headers: stringRecord(raw.headers),
        bearer_token: text(raw.bearer_token),
        timeout_sec,
      },
      null,
    ),
    cwd: null,
  };
};

/**
 * Reads sources.json's text as written, never expanding a variable: what `pulse trust` shows
 * before the user decides, and what status says was not started while the file is untrusted.
 */
export const trustView = (fileText: string): TrustView => {
  let raw: unknown;
  try {
    raw = JSON.parse(fileText.replace(/^\uFEFF/, ''));
  } catch (error) {
    return {
      servers: [],
      model: null,
      variables: [],
      unreadable: `it is not JSON (${(error as Error).message})`,
    };
  }
  if (!isRecord(raw))
    return { servers: [], model: null, variables: [], unreadable: 'it is not a JSON object' };
  const servers = isRecord(raw.mcpServers)
    ? Object.entries(raw.mcpServers).flatMap(([name, server]) =>
        isRecord(server) ? [serverView(name, server)] : [],
      )
    : [];
  const reflection = isRecord(raw.reflection) ? raw.reflection : {};
  const model = isRecord(reflection.model) ? (text(reflection.model.base_url) ?? null) : null;
  const expanded = [raw.mcpServers, reflection.model];
  const variables = [...new Set(variableReferences(expanded).map(({ variable }) => variable))];
  return { servers, model, variables, unreadable: null };
};
