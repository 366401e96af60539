import type { ChangeResult, EditOptions } from './file-edit.js';
import { isJsonObject, type JsonChange, type JsonObject } from './json-edit.js';

/** `--port N` as a way out of a conflict, when the user's entry points at another local pulse port. */
export const portHint = (url: string | undefined): string => {
  const match = /^http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)(?:\/p\/[^/]+)?\/mcp$/.exec(url ?? '');
  return match ? `, or keep it and pass --port ${match[1]} if your pulse serves there` : '';
};

/** The answer for a `pulse` entry that is not ours: a conflict, or with `--force` the replacement. */
export const existingEntry = (
  existingUrl: string | undefined,
  url: string,
  { force, forceCommand }: EditOptions,
  replace: () => void,
): ChangeResult => {
  if (existingUrl === url) return { kind: 'unchanged' };
  // Written by a pulse that served one project per daemon: the same daemon's port, now the project's own URL.
  const legacy = /^(http:\/\/127\.0\.0\.1:\d+)\/p\/[^/]+\/mcp$/.exec(url);
  if (legacy !== null && existingUrl === `${legacy[1]}/mcp`) {
    replace();
    return {
      kind: 'changed',
      replaced: `the "pulse" MCP server at ${existingUrl} (the daemon's URL before it served several projects)`,
    };
  }
  const described = existingUrl === undefined ? 'without a url' : `at ${existingUrl}`;
  if (!force) {
    return {
      kind: 'conflict',
      problem: `already has a "pulse" MCP server ${described}, not ${url}; left as it is`,
      fix: `\`${forceCommand}\` replaces it (after a backup)${portHint(existingUrl)}.`,
    };
  }
  replace();
  return { kind: 'changed', replaced: `the "pulse" MCP server ${described}` };
};

/**
 * Adds `pulse` to the servers object under `serversKey` (`mcpServers`, or VS Code's `servers`),
 * keeping every other server; an entry with the same url (under `urlKey`: Gemini's is `httpUrl`)
 * is left as it is.
 */
export const mcpServerChange =
  (serversKey: string, entry: JsonObject, urlKey = 'url'): JsonChange =>
  (doc, options) => {
    const servers = doc[serversKey] ?? {};
    if (!isJsonObject(servers)) {
      return {
        kind: 'invalid',
        problem: `has a "${serversKey}" that is not an object`,
        fix: `Make "${serversKey}" an object of servers, then run this again.`,
      };
    }
    doc[serversKey] = servers;
    const existing = servers.pulse;
    if (existing === undefined) {
      servers.pulse = entry;
      return { kind: 'changed' };
    }
    const existingUrl =
      isJsonObject(existing) && typeof existing[urlKey] === 'string' ? existing[urlKey] : undefined;
    return existingEntry(existingUrl, String(entry[urlKey]), options, () => {
      servers.pulse = entry;
    });
  };
