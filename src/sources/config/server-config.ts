// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config's own syntax, not a mistaken template.
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import type { ServerSummary } from '../../../machines/sources-context.js';
import type { HttpServerConfig, ServerConfig, StdioServerConfig } from './config.js';
import { DEFAULT_SERVER_TIMEOUT_SEC } from './config.js';
import { ConfigError } from './config-error.js';
import {
  type Fixes,
  formatPath,
  isRecord,
  MAX_TIMER_SEC,
  type Parsing,
  type Path,
  parseWith,
  typeName,
  warnUnknownKeys,
} from './config-parsing.js';
import { expand, expandValues, unsetVariables } from './expand-env.js';
import { httpSummary, stdioSummary } from './server-summary.js';
import { unsetVariablesReason } from './variables.js';

const timeoutSec = z.number().positive().max(MAX_TIMER_SEC).default(DEFAULT_SERVER_TIMEOUT_SEC);

const SERVER_FIXES: Fixes = {
  type: 'Leave "type" out: "command" makes a stdio server and "url" a streamable HTTP one (SSE is not supported).',
  command: 'Write the program to run as a string, e.g. "command": "npx".',
  args: 'Write args as a list of strings, e.g. "args": ["-y", "some-mcp-server"].',
  env: 'Write env as an object of strings, e.g. "env": {"API_KEY": "${API_KEY}"}.',
  cwd: 'Write cwd as an absolute directory path, or leave it out.',
  url: 'Write the server\'s endpoint as a string, e.g. "url": "http://127.0.0.1:9000/mcp".',
  headers: 'Write headers as an object of strings, e.g. "headers": {"X-Api-Key": "${API_KEY}"}.',
  bearer_token: 'Write the token as a string from the environment, e.g. "bearer_token": "${MAIL_TOKEN}".',
  timeout_sec: `Write a number of seconds above 0 and at most ${MAX_TIMER_SEC}, e.g. "timeout_sec": 30.`,
};

const stdioSchema = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  timeout_sec: timeoutSec,
});

const httpSchema = z.object({
  type: z.enum(['http', 'streamable-http']).optional(),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).default({}),
  bearer_token: z.string().min(1).optional(),
  timeout_sec: timeoutSec,
});

type StdioEntry = z.output<typeof stdioSchema>;
type HttpEntry = z.output<typeof httpSchema>;

const stdioServer = (name: string, server: StdioEntry, at: Path, parsing: Parsing): StdioServerConfig => {
  const cwd = server.cwd === undefined ? undefined : expand(server.cwd, parsing);
  if (cwd !== undefined && !isAbsolute(cwd)) {
    throw new ConfigError({
      file: parsing.file,
      jsonPath: formatPath([...at, 'cwd']),
      problem: 'is a relative path, which would depend on where pulse was started',
      fix: 'Write an absolute path; "${HOME}/…" works.',
    });
  }
  return {
    kind: 'stdio',
    name,
    command: expand(server.command, parsing),
    args: server.args.map((arg) => expand(arg, parsing)),
    env: expandValues(server.env, parsing),
    cwd,
    timeoutMs: Math.round(server.timeout_sec * 1000),
  };
};

const checkUrl = (url: string, path: Path, parsing: Parsing): void => {
  const fail = (problem: string) =>
    new ConfigError({ file: parsing.file, jsonPath: formatPath(path), problem, fix: SERVER_FIXES.url! });
  // The value may hold an expanded secret: describe it, never echo it.
  if (!URL.canParse(url)) throw fail('is not an absolute URL');
  const { protocol } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:')
    throw fail(`uses ${protocol.slice(0, -1)}, but only http and https are supported`);
};

const httpServer = (name: string, server: HttpEntry, at: Path, parsing: Parsing): HttpServerConfig => {
  const url = expand(server.url, parsing);
  checkUrl(url, [...at, 'url'], parsing);
  const headers = expandValues(server.headers, parsing);
  if (server.bearer_token !== undefined) {
    const token = expand(server.bearer_token, parsing);
    if (token === '') {
      throw new ConfigError({
        file: parsing.file,
        jsonPath: formatPath([...at, 'bearer_token']),
        problem: 'is empty once expanded',
        fix: 'Set the variable to the token, or remove bearer_token.',
      });
    }
    parsing.secrets.add(token);
    if (Object.keys(headers).some((header) => header.toLowerCase() === 'authorization')) {
      parsing.warnings.push(
        `${parsing.file}: ${formatPath(at)} has both an Authorization header and bearer_token; the header is used.`,
      );
    } else {
      headers.Authorization = `Bearer ${token}`;
    }
  }
  for (const value of Object.values(headers)) if (value !== '') parsing.secrets.add(value);
  return { kind: 'http', name, url, headers, timeoutMs: Math.round(server.timeout_sec * 1000) };
};

/** One entry of mcpServers: how status shows it, and its expanded config unless an unset `${VAR}` disables it. */
export interface ConfiguredServer {
  summary: ServerSummary;
  config: ServerConfig | null;
}

/**
 * Validates and expands one entry of mcpServers: "command" makes a stdio server, "url" an HTTP
 * one. A `${VAR}` that is not set disables this server only (`config` null), with the reason.
 */
export const serverOf = (name: string, raw: unknown, at: Path, parsing: Parsing): ConfiguredServer => {
  const fail = (problem: string, fix: string) =>
    new ConfigError({ file: parsing.file, jsonPath: formatPath(at), problem, fix });
  if (name === '') throw fail('a server has an empty name', 'Give the server a name, e.g. "cal".');
  if (!isRecord(raw))
    throw fail(`expected an object, got ${typeName(raw)}`, 'Write {"command": …} or {"url": …}.');
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (hasCommand === hasUrl) {
    throw fail(
      hasCommand ? 'has both command and url' : 'has neither command nor url',
      'Write "command" (with "args") to run a local stdio server, or "url" to reach one over HTTP: exactly one.',
    );
  }
  const schema = hasCommand ? stdioSchema : httpSchema;
  warnUnknownKeys(raw, schema.shape, at, parsing, hasCommand ? 'a stdio server' : 'an http server');
  const entry = parseWith(schema, raw, at, parsing, SERVER_FIXES);
  const unset = unsetVariables(entry, at, parsing);
  const disabled = unset.length === 0 ? null : unsetVariablesReason(unset, parsing.file);
  if (hasCommand) {
    const stdio = entry as StdioEntry;
    return {
      summary: stdioSummary(name, stdio, disabled),
      config: disabled === null ? stdioServer(name, stdio, at, parsing) : null,
    };
  }
  const http = entry as HttpEntry;
  return {
    summary: httpSummary(name, http, disabled),
    config: disabled === null ? httpServer(name, http, at, parsing) : null,
  };
};
