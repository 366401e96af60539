import { createHash } from 'node:crypto';
import type { ServerConfig, SourceConfig } from './config.js';
import { compareText, isRecord } from './config-parsing.js';

const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_key, node: unknown) =>
    isRecord(node) ? Object.fromEntries(Object.entries(node).sort(([a], [b]) => compareText(a, b))) : node,
  );

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Equal for two configs iff a connected client can serve the new one: what defines the
 * connection counts; the name and `timeoutMs` do not (the limit is passed on every call).
 */
export const configFingerprint = (server: ServerConfig): string =>
  sha256(
    sortedJson(
      server.kind === 'stdio'
        ? {
            kind: server.kind,
            command: server.command,
            args: server.args,
            env: server.env,
            cwd: server.cwd ?? null,
          }
        : { kind: server.kind, url: server.url, headers: server.headers },
    ),
  );

/**
 * Equal iff a running poller can go on as it is: what it calls and when counts, and its `map`
 * (a new map re-reads the items at once, with their new ids); the order of keys in `args` does
 * not; `urgency` and `rules` do not either (they are read when thinking and at the next poll).
 */
export const sourceFingerprint = (source: SourceConfig): string =>
  sha256(
    sortedJson({
      name: source.name,
      server: source.server,
      tool: source.tool,
      args: source.args,
      intervalMs: source.intervalMs,
      enabled: source.enabled,
      allowSideEffects: source.allowSideEffects ?? false,
      map: source.map ?? null,
    }),
  );
