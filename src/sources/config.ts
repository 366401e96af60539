import type { PolledSource } from '../../machines/external.js';
import type { ServerSummary } from '../../machines/sources.js';
import type { ReflectionConfig } from './reflection-config.js';

/** A local MCP server, spawned by pulse and spoken to over stdin/stdout. */
export interface StdioServerConfig {
  kind: 'stdio';
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  timeoutMs: number;
}

/** A remote MCP server, reached over streamable HTTP. */
export interface HttpServerConfig {
  kind: 'http';
  name: string;
  url: string;
  /** Includes `Authorization: Bearer <bearer_token>` unless the file wrote an Authorization header itself. */
  headers: Record<string, string>;
  timeoutMs: number;
}

/** A configured MCP server, local or remote. */
export type ServerConfig = StdioServerConfig | HttpServerConfig;

/** Raises or lowers a source's urgency for the items it matches. */
export type SourceRule =
  | { title_matches: string; urgency: number }
  | { starts_within_min: number; urgency: number };

/** Which tool of which server to poll, how often (what a poller needs), and how urgent its items are. */
export interface SourceConfig extends PolledSource {
  urgency: number;
  rules: SourceRule[];
}

/** `.pulse/sources.json` merged with `PULSE_MCP_SERVERS`, validated and expanded. */
export interface SourcesConfig {
  /** The servers that can run, expanded: what the client pool connects to. */
  servers: Record<string, ServerConfig>;
  /** Every configured server, those disabled by an unset `${VAR}` included, as status shows them. */
  serverSummaries: ServerSummary[];
  sources: SourceConfig[];
  storeDetail: boolean;
  /** The reflection gate's settings and which thinker judges. */
  reflection: ReflectionConfig;
  warnings: string[];
  /** Values to keep out of logs, status and the context resource. */
  secrets: string[];
}
