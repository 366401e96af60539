// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config's own syntax, not a mistaken template.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import type { PolledSource } from '../../machines/external.js';

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
  servers: Record<string, ServerConfig>;
  sources: SourceConfig[];
  storeDetail: boolean;
  warnings: string[];
  /** Values to keep out of logs, status and the context resource. */
  secrets: string[];
}

/** A problem in the sources config: the file, where in it, what is wrong, and how to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly file: string;
  readonly jsonPath: string;
  readonly fix: string;

  constructor(details: { file: string; jsonPath: string; problem: string; fix: string; cause?: unknown }) {
    const { file, jsonPath, problem, fix, cause } = details;
    super(`${file} at ${jsonPath}: ${problem}. ${fix}`, cause === undefined ? undefined : { cause });
    this.file = file;
    this.jsonPath = jsonPath;
    this.fix = fix;
  }
}

/** Node timers hold at most 2^31 − 1 ms; a longer delay fires at once instead. */
const MAX_TIMER_SEC = 2_147_483;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_ARGS_DEPTH = 64;
const TOP_LEVEL = '(top level)';
const ENV_SERVERS = 'PULSE_MCP_SERVERS';
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const DOCS = 'See docs/sources.md for every key and its type.';

type Path = readonly (string | number)[];
type Fixes = Readonly<Record<string, string>>;

/** What one parse collects while it walks the config. */
interface Parsing {
  file: string;
  env: Record<string, string | undefined>;
  warnings: string[];
  secrets: Set<string>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const typeName = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

const formatPath = (path: Path): string =>
  path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    if (!/^[A-Za-z_$][\w$-]*$/.test(key)) return `${text}[${JSON.stringify(key)}]`;
    return text === '' ? key : `${text}.${key}`;
  }, '') || TOP_LEVEL;

const valueAt = (value: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (node, key) => (typeof node === 'object' && node !== null ? Reflect.get(node, key) : undefined),
    value,
  );

const problemOf = (issue: z.core.$ZodIssue, received: unknown): string => {
  const key = issue.path.at(-1);
  switch (issue.code) {
    case 'invalid_type':
      if (received === undefined && typeof key === 'string') return `"${key}" is missing`;
      return `expected ${issue.expected === 'record' ? 'object' : issue.expected}, got ${typeName(received)}`;
    case 'too_small':
      if (issue.origin === 'string') return 'must not be empty';
      return `must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}, got ${String(received)}`;
    case 'too_big':
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}, got ${String(received)}`;
    case 'invalid_value':
      return `must be ${issue.values.map((value) => JSON.stringify(value)).join(' or ')}, got ${JSON.stringify(received)}`;
    default:
      return issue.message;
  }
};

/** The fix a refinement attached, else the one for the nearest key on the path that has one. */
const fixOf = (issue: z.core.$ZodIssue, path: Path, fixes: Fixes): string => {
  const attached = issue.code === 'custom' ? issue.params?.fix : undefined;
  if (typeof attached === 'string') return attached;
  for (const key of [...path].reverse())
    if (typeof key === 'string' && Object.hasOwn(fixes, key)) return fixes[key]!;
  return fixes[''] ?? DOCS;
};

/** Parses with zod; the first issue becomes a ConfigError at its JSON path. */
const parseWith = <T extends z.ZodType>(
  schema: T,
  value: unknown,
  at: Path,
  parsing: Parsing,
  fixes: Fixes,
): z.output<T> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = [...at, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))];
  throw new ConfigError({
    file: parsing.file,
    jsonPath: formatPath(path),
    problem: problemOf(issue, valueAt(value, issue.path)),
    fix: fixOf(issue, path, fixes),
  });
};

const warnUnknownKeys = (
  raw: Record<string, unknown>,
  known: object,
  at: Path,
  parsing: Parsing,
  what: string,
) => {
  const unknown = Object.keys(raw).filter((key) => !Object.hasOwn(known, key) && key !== '$schema');
  if (unknown.length === 0) return;
  const keys = unknown.map((key) => `"${key}"`).join(', ');
  const where = at.length === 0 ? 'at the top level' : `in ${formatPath(at)}`;
  parsing.warnings.push(
    `${parsing.file}: unknown key${unknown.length > 1 ? 's' : ''} ${keys} ${where} ${unknown.length > 1 ? 'are' : 'is'} ignored. Known for ${what}: ${Object.keys(known).join(', ')}`,
  );
};

/** Replaces each `${VAR}` from the environment; what it put in is a secret. */
const expand = (text: string, path: Path, parsing: Parsing): string =>
  text.replace(VARIABLE, (_match, variable: string) => {
    const value = parsing.env[variable];
    if (value === undefined) {
      throw new ConfigError({
        file: parsing.file,
        jsonPath: formatPath(path),
        problem: `\${${variable}} is not set in the environment`,
        fix: `export ${variable}=… before starting pulse.`,
      });
    }
    if (value !== '') parsing.secrets.add(value);
    return value;
  });

const expandValues = (record: Record<string, string>, at: Path, parsing: Parsing): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, expand(value, [...at, key], parsing)]),
  );

const seconds = (min: number) => z.number().min(min).max(MAX_TIMER_SEC);
const timeoutSec = z.number().positive().max(MAX_TIMER_SEC).default(30);
const urgency = z.number().min(0).max(1);

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

const stdioServer = (name: string, raw: unknown, at: Path, parsing: Parsing): StdioServerConfig => {
  const server = parseWith(stdioSchema, raw, at, parsing, SERVER_FIXES);
  const cwd = server.cwd === undefined ? undefined : expand(server.cwd, [...at, 'cwd'], parsing);
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
    command: expand(server.command, [...at, 'command'], parsing),
    args: server.args.map((arg, index) => expand(arg, [...at, 'args', index], parsing)),
    env: expandValues(server.env, [...at, 'env'], parsing),
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

const httpServer = (name: string, raw: unknown, at: Path, parsing: Parsing): HttpServerConfig => {
  const server = parseWith(httpSchema, raw, at, parsing, SERVER_FIXES);
  const url = expand(server.url, [...at, 'url'], parsing);
  checkUrl(url, [...at, 'url'], parsing);
  const headers = expandValues(server.headers, [...at, 'headers'], parsing);
  if (server.bearer_token !== undefined) {
    const token = expand(server.bearer_token, [...at, 'bearer_token'], parsing);
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

const serverOf = (name: string, raw: unknown, at: Path, parsing: Parsing): ServerConfig => {
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
  return hasCommand ? stdioServer(name, raw, at, parsing) : httpServer(name, raw, at, parsing);
};

const SOURCE_FIXES: Fixes = {
  sources:
    'Write each source as an object, e.g. {"name": "cal-upcoming", "server": "cal", "tool": "list_events"}.',
  name: 'Give the source a name of its own, e.g. "name": "cal-upcoming".',
  server: 'Name a server of mcpServers, e.g. "server": "cal".',
  tool: 'Name the tool to call, e.g. "tool": "list_events".',
  args: 'Write the tool\'s arguments as a JSON object, e.g. "args": {"max_results": 10}.',
  interval_sec: `Write a number of seconds from 1 to ${MAX_TIMER_SEC}, e.g. "interval_sec": 300.`,
  enabled: 'Write true or false.',
  urgency: 'Write a number from 0 to 1, e.g. "urgency": 0.5.',
  rules: 'Write rules as a list, e.g. "rules": [{"title_matches": "urgent|asap", "urgency": 0.9}].',
  title_matches:
    'Write a JavaScript regular expression; in JSON a backslash is written twice, e.g. "v\\\\d+".',
  starts_within_min: 'Write a number of minutes of 0 or more, e.g. "starts_within_min": 15.',
};

const nestsDeeperThan = (value: unknown, levels: number): boolean => {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  return Object.values(value).some((child) => nestsDeeperThan(child, levels - 1));
};

const ruleSchema = z
  .object({
    title_matches: z.string().optional(),
    starts_within_min: z.number().min(0).optional(),
    urgency,
  })
  .superRefine((rule, ctx) => {
    const hasTitle = rule.title_matches !== undefined;
    if (hasTitle === (rule.starts_within_min !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: hasTitle
          ? 'has both title_matches and starts_within_min'
          : 'has neither title_matches nor starts_within_min',
        params: {
          fix: 'Write one test a rule: {"title_matches": "<regex>", …} or {"starts_within_min": 15, …}.',
        },
      });
      return;
    }
    if (!hasTitle) return;
    try {
      new RegExp(rule.title_matches!);
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        path: ['title_matches'],
        message: `is not a valid regular expression (${(error as Error).message})`,
        params: { fix: SOURCE_FIXES.title_matches },
      });
    }
  })
  .transform(
    ({ title_matches, starts_within_min, urgency }): SourceRule =>
      title_matches === undefined
        ? { starts_within_min: starts_within_min!, urgency }
        : { title_matches, urgency },
  );

const sourceSchema = z.object({
  name: z.string().min(1),
  server: z.string().min(1),
  tool: z.string().min(1),
  args: z
    .record(z.string(), z.unknown())
    .refine((args) => !nestsDeeperThan(args, MAX_ARGS_DEPTH), {
      message: `nests deeper than ${MAX_ARGS_DEPTH} levels`,
      params: { fix: 'Tools take plain JSON arguments: flatten args.' },
    })
    .default({}),
  interval_sec: seconds(1).default(300),
  enabled: z.boolean().default(true),
  urgency: urgency.default(0.5),
  rules: z.array(ruleSchema).default([]),
});

const sourceOf = (raw: unknown, at: Path, parsing: Parsing): SourceConfig => {
  if (isRecord(raw)) warnUnknownKeys(raw, sourceSchema.shape, at, parsing, 'a source');
  const source = parseWith(sourceSchema, raw, at, parsing, SOURCE_FIXES);
  return {
    name: source.name,
    server: source.server,
    tool: source.tool,
    args: source.args,
    intervalMs: Math.round(source.interval_sec * 1000),
    enabled: source.enabled,
    urgency: source.urgency,
    rules: source.rules,
  };
};

const fileSchema = z.object({
  mcpServers: z.record(z.string(), z.unknown()).default({}),
  sources: z.array(z.unknown()).default([]),
  store_detail: z.boolean().default(false),
});

const FILE_FIXES: Fixes = {
  mcpServers:
    'Write mcpServers as an object of named servers, e.g. {"cal": {"command": "node", "args": ["cal.js"]}}.',
  sources:
    'Write sources as a list, e.g. [{"name": "cal-upcoming", "server": "cal", "tool": "list_events"}].',
  store_detail: 'Write true or false.',
  '': 'Write a JSON object with "mcpServers" and "sources".',
};

/** JSON.parse's message without the text it quotes, plus the line and column when it gives a position. */
const parseJson = (text: string, file: string, fix: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message)?.[1];
    const offset =
      position !== undefined ? Number(position) : /end of JSON input/.test(message) ? text.length : null;
    const before = offset === null ? null : text.slice(0, offset).split('\n');
    const reason = message.replace(/, ".*" is not valid JSON$/s, '').replace(/ in JSON at position.*$/s, '');
    throw new ConfigError({
      file,
      jsonPath: before === null ? TOP_LEVEL : `line ${before.length}, column ${before.at(-1)!.length + 1}`,
      problem: `is not valid JSON (${reason})`,
      fix,
      cause: error,
    });
  }
};

const serversFromEnv = (parsing: Parsing): Record<string, unknown> => {
  const text = parsing.env[ENV_SERVERS];
  if (text === undefined || text.trim() === '') return {};
  const fix = `Set ${ENV_SERVERS} to a JSON object of servers, e.g. '{"cal": {"command": "node", "args": ["cal.js"]}}'.`;
  const raw = parseJson(text, ENV_SERVERS, fix);
  if (!isRecord(raw)) {
    throw new ConfigError({
      file: ENV_SERVERS,
      jsonPath: TOP_LEVEL,
      problem: `expected an object, got ${typeName(raw)}`,
      fix,
    });
  }
  return raw;
};

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Validates `.pulse/sources.json` (and the servers of `PULSE_MCP_SERVERS`), expands `${VAR}`
 * in server strings, and drops sources whose server is not configured, with a warning.
 */
export const parseSourcesConfig = (
  text: string,
  options: { file: string; env: Record<string, string | undefined> },
): SourcesConfig => {
  const parsing: Parsing = { file: options.file, env: options.env, warnings: [], secrets: new Set() };
  const raw = parseJson(
    text.replace(/^\uFEFF/, ''),
    options.file,
    'Fix the JSON syntax there: a trailing comma, a missing quote or a comment is the usual cause.',
  );
  if (isRecord(raw)) warnUnknownKeys(raw, fileSchema.shape, [], parsing, 'the file');
  const top = parseWith(fileSchema, raw, [], parsing, FILE_FIXES);

  const fromEnv = serversFromEnv(parsing);
  const envParsing: Parsing = { ...parsing, file: ENV_SERVERS };
  const servers: [string, ServerConfig][] = Object.entries(top.mcpServers).map(([name, server]) => [
    name,
    serverOf(name, server, ['mcpServers', name], parsing),
  ]);
  for (const [name, server] of Object.entries(fromEnv)) {
    if (Object.hasOwn(top.mcpServers, name)) {
      parsing.warnings.push(
        `server "${name}" is configured in both ${options.file} and ${ENV_SERVERS}; the file's entry is used.`,
      );
    } else {
      servers.push([name, serverOf(name, server, [name], envParsing)]);
    }
  }

  const firstIndexByName = new Map<string, number>();
  const sources: SourceConfig[] = [];
  const configured = servers.map(([name]) => name).sort(compareText);
  top.sources.forEach((raw, index) => {
    const source = sourceOf(raw, ['sources', index], parsing);
    const first = firstIndexByName.get(source.name);
    if (first !== undefined) {
      throw new ConfigError({
        file: options.file,
        jsonPath: formatPath(['sources', index, 'name']),
        problem: `"${source.name}" is already the name of sources[${first}]`,
        fix: 'Give each source its own name: pulse keys seen items and pollers by it.',
      });
    }
    firstIndexByName.set(source.name, index);
    if (configured.includes(source.server)) {
      sources.push(source);
    } else {
      parsing.warnings.push(
        `source "${source.name}" names server "${source.server}", which is not configured; it is ignored. Configured: ${configured.join(', ') || 'none'}`,
      );
    }
  });

  return {
    servers: Object.fromEntries(servers),
    sources,
    storeDetail: top.store_detail,
    warnings: parsing.warnings,
    secrets: [...parsing.secrets],
  };
};

const unreadable = (path: string, problem: string, fix: string, cause?: unknown) =>
  new ConfigError({ file: path, jsonPath: TOP_LEVEL, problem, fix, cause });

/** Reads and parses the file; `null` when there is none (no sources, no pollers). */
export const loadSourcesConfig = async (
  path: string,
  env: Record<string, string | undefined>,
): Promise<SourcesConfig | null> => {
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile())
      throw unreadable(path, 'is not a regular file', 'Replace it with a JSON file, or remove it.');
    if (info.size > MAX_FILE_BYTES) {
      throw unreadable(
        path,
        `is ${info.size} bytes, more than the limit of ${MAX_FILE_BYTES} (1 MiB)`,
        'Keep it to servers and sources; a config this big is likely not the file you meant.',
      );
    }
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'EACCES' || code === 'EPERM')
      throw unreadable(
        path,
        'cannot be read: permission denied',
        'Make it readable by the user who runs pulse.',
        error,
      );
    throw unreadable(
      path,
      `cannot be read (${code ?? (error as Error).message})`,
      'Check the file and its folder.',
      error,
    );
  }
  return parseSourcesConfig(text, { file: path, env });
};

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
 * Equal iff a running poller can go on as it is: what it calls and when counts, the order of
 * keys in `args` does not; `urgency` and `rules` do not either (they are read when thinking).
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
    }),
  );

/** Replaces every occurrence of each secret with `***`, longest secrets first. */
export const redactSecrets = (text: string, secrets: readonly string[]): string => {
  const ordered = [...new Set(secrets)].filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return text;
  const pattern = new RegExp(
    ordered.map((secret) => secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
    'g',
  );
  return text.replace(pattern, '***');
};
