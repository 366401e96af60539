// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config syntax under test, not a mistaken template.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/log/redact-secrets.js';
import type {
  HttpServerConfig,
  ServerConfig,
  SourceConfig,
  SourcesConfig,
  StdioServerConfig,
} from '../../src/sources/config/config.js';
import { ConfigError } from '../../src/sources/config/config-error.js';
import { configFingerprint, sourceFingerprint } from '../../src/sources/config/fingerprint.js';
import { loadSourcesConfig } from '../../src/sources/config/load-config.js';
import { parseSourcesConfig } from '../../src/sources/config/parse-config.js';

const FILE = '.pulse/sources.json';
const ENV = { CAL_KEY: 'cal-key-123', MAIL_TOKEN: 'mail-token-456' };

const parse = (config: unknown, env: Record<string, string | undefined> = ENV): SourcesConfig =>
  parseSourcesConfig(typeof config === 'string' ? config : JSON.stringify(config), { file: FILE, env });

/** The ConfigError `run` throws; fails the test when it throws nothing or something else. */
const configErrorOf = (run: () => unknown): ConfigError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
};

const stdio = (config: SourcesConfig, name: string) => config.servers[name] as StdioServerConfig;
const http = (config: SourcesConfig, name: string) => config.servers[name] as HttpServerConfig;

const EXAMPLE = {
  mcpServers: {
    cal: { command: 'node', args: ['cal.js'], env: { K: '${CAL_KEY}' }, cwd: '/srv/cal' },
    mail: { url: 'http://127.0.0.1:9000/mcp', headers: {}, bearer_token: '${MAIL_TOKEN}', timeout_sec: 30 },
  },
  sources: [
    {
      name: 'cal-upcoming',
      server: 'cal',
      tool: 'list_events',
      args: {},
      interval_sec: 300,
      enabled: true,
      urgency: 0.5,
      rules: [],
    },
  ],
  store_detail: false,
};

describe('parseSourcesConfig: a config with every kind of server', () => {
  it('reads a stdio server, an http server and a source into their typed shapes', () => {
    const config = parse(EXAMPLE);
    expect(config.servers.cal).toEqual({
      kind: 'stdio',
      name: 'cal',
      command: 'node',
      args: ['cal.js'],
      env: { K: 'cal-key-123' },
      cwd: '/srv/cal',
      timeoutMs: 30_000,
    });
    expect(config.servers.mail).toEqual({
      kind: 'http',
      name: 'mail',
      url: 'http://127.0.0.1:9000/mcp',
      headers: { Authorization: 'Bearer mail-token-456' },
      timeoutMs: 30_000,
    });
    expect(config.sources).toEqual([
      {
        name: 'cal-upcoming',
        server: 'cal',
        tool: 'list_events',
        args: {},
        intervalMs: 300_000,
        enabled: true,
        allowSideEffects: false,
        urgency: 0.5,
        rules: [],
      },
    ]);
    expect(config.storeDetail).toBe(false);
    expect(config.warnings).toEqual([]);
  });

  it('fills every default when only the required keys are written', () => {
    const config = parse({
      mcpServers: { cal: { command: 'cal-server' }, mail: { url: 'https://mail.example/mcp' } },
      sources: [{ name: 'upcoming', server: 'cal', tool: 'list_events' }],
    });
    expect(config.servers.cal).toEqual({
      kind: 'stdio',
      name: 'cal',
      command: 'cal-server',
      args: [],
      env: {},
      cwd: undefined,
      timeoutMs: 30_000,
    });
    expect(config.servers.mail).toEqual({
      kind: 'http',
      name: 'mail',
      url: 'https://mail.example/mcp',
      headers: {},
      timeoutMs: 30_000,
    });
    expect(config.sources[0]).toEqual({
      name: 'upcoming',
      server: 'cal',
      tool: 'list_events',
      args: {},
      intervalMs: 300_000,
      enabled: true,
      allowSideEffects: false,
      urgency: 0.5,
      rules: [],
    });
    expect(config.storeDetail).toBe(false);
    expect(config.secrets).toEqual([]);
  });

  it('reads an empty object as no servers and no sources', () => {
    expect(parse({})).toEqual({
      servers: {},
      serverSummaries: [],
      sources: [],
      storeDetail: false,
      reflection: { thinker: 'rules', gate: {}, model: null },
      warnings: [],
      secrets: [],
    });
  });

  it('converts fractional seconds to whole milliseconds and keeps store_detail', () => {
    const config = parse({
      mcpServers: { cal: { command: 'c', timeout_sec: 2.5 } },
      sources: [{ name: 's', server: 'cal', tool: 't', interval_sec: 1.5 }],
      store_detail: true,
    });
    expect(config.servers.cal?.timeoutMs).toBe(2500);
    expect(config.sources[0]?.intervalMs).toBe(1500);
    expect(config.storeDetail).toBe(true);
  });

  it('skips a UTF-8 byte order mark written by some editors', () => {
    expect(parse(`\uFEFF${JSON.stringify(EXAMPLE)}`).sources).toHaveLength(1);
  });
});

describe('parseSourcesConfig: ${VAR} expansion and secrets', () => {
  const everyString = {
    mcpServers: {
      local: {
        command: '${BIN}/server',
        args: ['--token=${TOKEN}', 'plain'],
        env: { API_KEY: '${API_KEY}', MODE: 'fast' },
        cwd: '${HOME_DIR}/work',
      },
      remote: {
        url: 'https://${HOST}/mcp',
        headers: { 'X-Api-Key': '${HEADER_KEY}', 'X-Team': 'core' },
        bearer_token: '${BEARER}',
      },
    },
  };
  const env = {
    BIN: '/opt/bin',
    TOKEN: 'tok-1',
    API_KEY: 'key-2',
    HOME_DIR: '/home/ada',
    HOST: 'mail.example',
    HEADER_KEY: 'hk-3',
    BEARER: 'bearer-4',
  };

  it('expands variables in command, args, env values, cwd, url, headers and bearer_token', () => {
    const config = parse(everyString, env);
    expect(stdio(config, 'local')).toMatchObject({
      command: '/opt/bin/server',
      args: ['--token=tok-1', 'plain'],
      env: { API_KEY: 'key-2', MODE: 'fast' },
      cwd: '/home/ada/work',
    });
    expect(http(config, 'remote')).toMatchObject({
      url: 'https://mail.example/mcp',
      headers: { 'X-Api-Key': 'hk-3', 'X-Team': 'core', Authorization: 'Bearer bearer-4' },
    });
  });

  it('lists expanded values, bearer tokens and every header value as secrets, and no literal stdio value', () => {
    const { secrets } = parse(everyString, env);
    expect(new Set(secrets)).toEqual(
      new Set([
        '/opt/bin',
        'tok-1',
        'key-2',
        '/home/ada',
        'mail.example',
        'hk-3',
        'bearer-4',
        'core',
        'Bearer bearer-4',
      ]),
    );
    expect(secrets).not.toContain('fast');
    expect(secrets).not.toContain('plain');
  });

  it('expands several variables in one string and leaves text that is not a reference alone', () => {
    const config = parse(
      { mcpServers: { s: { command: 'run', args: ['${A}-${B}', '$A', '${not a var}'] } } },
      { A: 'x', B: 'y' },
    );
    expect(stdio(config, 's').args).toEqual(['x-y', '$A', '${not a var}']);
  });

  it('does not expand variables in sources: their args are passed to the tool as written, with a warning', () => {
    const config = parse({
      mcpServers: { cal: { command: 'c' } },
      sources: [{ name: 's', server: 'cal', tool: 't', args: { q: ['x', '${CAL_KEY}'] } }],
    });
    expect(config.sources[0]?.args).toEqual({ q: ['x', '${CAL_KEY}'] });
    expect(config.warnings).toEqual([
      '.pulse/sources.json: sources[0].args.q[1] holds ${CAL_KEY}, which is sent to the tool as written: pulse expands ${VAR} in servers only (their env, args, url, headers).',
    ]);
  });

  it('disables only the server of an unset variable, naming the variable, the path and the fix; the others run', () => {
    const config = parse(
      { ...EXAMPLE, sources: [...EXAMPLE.sources, { name: 'mail-unread', server: 'mail', tool: 'search' }] },
      { CAL_KEY: 'k' },
    );
    expect(Object.keys(config.servers), 'only cal can run').toEqual(['cal']);
    expect(
      config.sources.map((s) => s.name),
      'both sources stay configured',
    ).toEqual(['cal-upcoming', 'mail-unread']);
    const mail = config.serverSummaries.find((s) => s.name === 'mail')!;
    expect(mail.disabled).toBe(
      '${MAIL_TOKEN} is not set in the environment (.pulse/sources.json at mcpServers.mail.bearer_token). ' +
        'Export MAIL_TOKEN=… in the shell that starts pulse, then restart pulse (it reads its environment once, at start); ' +
        'or write the value in place of ${MAIL_TOKEN}.',
    );
    expect(config.serverSummaries.find((s) => s.name === 'cal')!.disabled).toBeNull();
    expect(config.warnings).toEqual([
      `server "mail" is disabled, its source mail-unread does not run: ${mail.disabled}`,
    ]);
  });

  it('names every unset variable of a server and the exact element of each, in args, env and headers', () => {
    const reason = (server: unknown) => parse({ mcpServers: { s: server } }, {}).serverSummaries[0]!.disabled;
    expect(reason({ command: 'c', args: ['ok', '${MISSING}'] })).toContain(
      '(.pulse/sources.json at mcpServers.s.args[1])',
    );
    expect(reason({ command: 'c', env: { API_KEY: '${MISSING}' } })).toContain(
      'at mcpServers.s.env.API_KEY)',
    );
    expect(reason({ url: 'http://h/mcp', headers: { 'X-Api-Key': '${MISSING}' } })).toContain(
      'at mcpServers.s.headers.X-Api-Key)',
    );
    expect(reason({ url: 'http://h/mcp', headers: { 'x key': '${MISSING}' } })).toContain(
      'at mcpServers.s.headers["x key"])',
    );
    expect(reason({ command: '${BIN}', env: { A: '${A}-${B}', C: '${A}' } })).toMatch(
      /^\$\{BIN\}, \$\{A\} and \$\{B\} are not set in the environment \(\.pulse\/sources\.json at mcpServers\.s\.command, mcpServers\.s\.env\.A, mcpServers\.s\.env\.C\)\. Export BIN=…, A=… and B=… in the shell/,
    );
  });

  it('does not validate or expand a disabled server, and keeps the values of its set variables out of secrets', () => {
    const config = parse(
      { mcpServers: { s: { url: '${HOST}/mcp', headers: { 'X-Key': '${KEY}' }, bearer_token: '${TOKEN}' } } },
      { KEY: 'key-value', TOKEN: 'token-value' },
    );
    expect(config.servers).toEqual({});
    expect(config.serverSummaries[0]!.disabled).toMatch(/^\$\{HOST\} is not set/);
    expect(config.secrets).toEqual([]);
    expect(JSON.stringify(config)).not.toMatch(/key-value|token-value/);
  });

  it('says when no source uses a disabled server, and names the variables of PULSE_MCP_SERVERS there', () => {
    const config = parse(
      { mcpServers: {} },
      {
        PULSE_MCP_SERVERS: JSON.stringify({ jira: { url: 'https://j/mcp', bearer_token: '${JIRA_TOKEN}' } }),
      },
    );
    expect(config.warnings).toEqual([
      expect.stringMatching(
        /^server "jira" is disabled, no source uses it: \$\{JIRA_TOKEN\} is not set in the environment \(PULSE_MCP_SERVERS at jira\.bearer_token\)/,
      ),
    ]);
  });

  it('still rejects a broken shape in a server that has an unset variable: the file must be fixed either way', () => {
    const error = configErrorOf(() => parse({ mcpServers: { s: { command: '${BIN}', args: 'x' } } }, {}));
    expect(error.jsonPath).toBe('mcpServers.s.args');
  });

  it('shows each server as written, never a value: the command line, the URL masked, env and header names', () => {
    const config = parse(
      {
        mcpServers: {
          local: {
            command: 'npx',
            args: ['-y', 'some server', '--key=${API_KEY}'],
            env: { API_KEY: '${API_KEY}' },
          },
          remote: {
            url: 'https://user:pw@h.example/mcp?key=abc&team=${TEAM}',
            headers: { 'X-Team': 'core' },
            bearer_token: '${MAIL_TOKEN}',
            timeout_sec: 5,
          },
        },
      },
      { API_KEY: 'key-1', MAIL_TOKEN: 'mail-2', TEAM: 'team-3' },
    );
    expect(config.serverSummaries).toEqual([
      {
        name: 'local',
        transport: 'stdio',
        target: 'npx -y "some server" --key=${API_KEY}',
        env: ['API_KEY'],
        headers: [],
        timeoutMs: 30_000,
        disabled: null,
      },
      {
        name: 'remote',
        transport: 'http',
        target: 'https://***@h.example/mcp?key=***&team=***',
        env: [],
        headers: ['X-Team', 'Authorization'],
        timeoutMs: 5_000,
        disabled: null,
      },
    ]);
  });

  it('treats a variable set to the empty string as set, and keeps the empty value out of secrets', () => {
    const config = parse({ mcpServers: { s: { command: 'c', args: ['${EMPTY}'] } } }, { EMPTY: '' });
    expect(stdio(config, 's').args).toEqual(['']);
    expect(config.secrets).toEqual([]);
  });

  it('rejects a bearer token that expands to nothing', () => {
    const error = configErrorOf(() =>
      parse({ mcpServers: { mail: { url: 'http://h/mcp', bearer_token: '${T}' } } }, { T: '' }),
    );
    expect(error.jsonPath).toBe('mcpServers.mail.bearer_token');
    expect(error.message).toContain('empty');
  });
});

describe('parseSourcesConfig: Authorization', () => {
  it('sends bearer_token as Authorization: Bearer <token> when headers has none', () => {
    const config = parse({
      mcpServers: {
        mail: { url: 'http://h/mcp', headers: { 'X-Team': 'a' }, bearer_token: 'literal-token' },
      },
    });
    expect(http(config, 'mail').headers).toEqual({ 'X-Team': 'a', Authorization: 'Bearer literal-token' });
    expect(config.secrets).toContain('literal-token');
    expect(config.warnings).toEqual([]);
  });

  it('keeps an explicit Authorization header (any case) over bearer_token, and warns', () => {
    const config = parse({
      mcpServers: {
        mail: { url: 'http://h/mcp', headers: { authorization: 'Basic abc' }, bearer_token: '${MAIL_TOKEN}' },
      },
    });
    expect(http(config, 'mail').headers).toEqual({ authorization: 'Basic abc' });
    expect(config.secrets).toEqual(expect.arrayContaining(['Basic abc', 'mail-token-456']));
    expect(config.warnings).toEqual([
      '.pulse/sources.json: mcpServers.mail has both an Authorization header and bearer_token; the header is used.',
    ]);
  });
});

describe('parseSourcesConfig: server shape', () => {
  const serverError = (server: unknown) => configErrorOf(() => parse({ mcpServers: { s: server } }));

  it('rejects a server with both command and url', () => {
    const error = serverError({ command: 'c', url: 'http://h/mcp' });
    expect(error.jsonPath).toBe('mcpServers.s');
    expect(error.message).toContain('has both command and url');
    expect(error.fix).toContain('exactly one');
  });

  it('rejects a server with neither command nor url', () => {
    expect(serverError({ args: ['x'] }).message).toContain('has neither command nor url');
  });

  it('rejects a server that is not an object', () => {
    expect(serverError('node cal.js').message).toBe(
      '.pulse/sources.json at mcpServers.s: expected an object, got string. Write {"command": …} or {"url": …}.',
    );
  });

  it('rejects a url with another scheme than http or https, without echoing the value', () => {
    const error = configErrorOf(() =>
      parse({ mcpServers: { s: { url: '${U}' } } }, { U: 'ftp://user:hunter2@files.example/mcp' }),
    );
    expect(error.jsonPath).toBe('mcpServers.s.url');
    expect(error.message).toContain('uses ftp, but only http and https are supported');
    expect(error.message).not.toContain('hunter2');
  });

  it('rejects a url that is not absolute', () => {
    expect(serverError({ url: '/mcp' }).message).toContain('is not an absolute URL');
  });

  it('rejects a relative cwd, which would depend on where pulse was started', () => {
    const error = serverError({ command: 'c', cwd: 'servers/cal' });
    expect(error.jsonPath).toBe('mcpServers.s.cwd');
    expect(error.fix).toContain('absolute path');
  });

  it('rejects type "sse" and a type that contradicts command or url', () => {
    const sse = serverError({ url: 'http://h/mcp', type: 'sse' });
    expect(sse.jsonPath).toBe('mcpServers.s.type');
    expect(sse.message).toContain('must be "http" or "streamable-http", got "sse"');
    expect(sse.fix).toContain('SSE is not supported');
    expect(serverError({ command: 'c', type: 'http' }).jsonPath).toBe('mcpServers.s.type');
    expect(parse({ mcpServers: { s: { url: 'http://h/mcp', type: 'http' } } }).servers.s?.kind).toBe('http');
  });

  it('names the element and the expected type of a wrong value, with a fix for that key', () => {
    const args = serverError({ command: 'c', args: ['a', 3] });
    expect(args.jsonPath).toBe('mcpServers.s.args[1]');
    expect(args.message).toContain('expected string, got number');
    expect(args.fix).toContain('list of strings');
    const env = serverError({ command: 'c', env: { K: true } });
    expect(env.jsonPath).toBe('mcpServers.s.env.K');
    expect(env.fix).toContain('object of strings');
  });

  it('rejects a timeout of zero or less', () => {
    const error = serverError({ command: 'c', timeout_sec: 0 });
    expect(error.message).toBe(
      '.pulse/sources.json at mcpServers.s.timeout_sec: must be greater than 0, got 0. Write a number of seconds above 0 and at most 2147483, e.g. "timeout_sec": 30.',
    );
  });

  it("warns about keys a server does not use, such as another client's settings, and still reads it", () => {
    const config = parse({ mcpServers: { s: { url: 'http://h/mcp', autoApprove: [], args: [] } } });
    expect(config.servers.s?.kind).toBe('http');
    expect(config.warnings).toEqual([
      '.pulse/sources.json: unknown keys "autoApprove", "args" in mcpServers.s are ignored. Known for an http server: type, url, headers, bearer_token, timeout_sec',
    ]);
  });
});

describe('parseSourcesConfig: PULSE_MCP_SERVERS', () => {
  const withEnvServers = (servers: unknown, extra: Record<string, string> = {}) => ({
    ...ENV,
    ...extra,
    PULSE_MCP_SERVERS: typeof servers === 'string' ? servers : JSON.stringify(servers),
  });

  it('adds the servers of the environment variable to those of the file', () => {
    const config = parse(
      { mcpServers: { cal: { command: 'c' } }, sources: [{ name: 's', server: 'jira', tool: 't' }] },
      withEnvServers(
        { jira: { url: 'https://jira.example/mcp', bearer_token: '${JIRA_TOKEN}' } },
        { JIRA_TOKEN: 'jt' },
      ),
    );
    expect(Object.keys(config.servers)).toEqual(['cal', 'jira']);
    expect(http(config, 'jira').headers).toEqual({ Authorization: 'Bearer jt' });
    expect(config.secrets).toContain('jt');
    expect(config.sources.map((source) => source.name)).toEqual(['s']);
  });

  it("uses the file's entry when both define a server, and warns", () => {
    const config = parse(
      { mcpServers: { cal: { command: 'from-file' } } },
      withEnvServers({ cal: { command: 'from-env' } }),
    );
    expect(stdio(config, 'cal').command).toBe('from-file');
    expect(config.warnings).toEqual([
      'server "cal" is configured in both .pulse/sources.json and PULSE_MCP_SERVERS; the file\'s entry is used.',
    ]);
  });

  it('serves the servers of the environment variable when the file has none', () => {
    expect(Object.keys(parse({}, withEnvServers({ cal: { command: 'c' } })).servers)).toEqual(['cal']);
  });

  it('ignores an empty PULSE_MCP_SERVERS', () => {
    expect(parse({}, withEnvServers('  ')).servers).toEqual({});
  });

  it('rejects malformed JSON in the environment variable, naming the variable', () => {
    const error = configErrorOf(() => parse({}, withEnvServers('{"cal": ')));
    expect(error.file).toBe('PULSE_MCP_SERVERS');
    expect(error.message).toMatch(/^PULSE_MCP_SERVERS at line 1, column 9: is not valid JSON/);
    expect(error.fix).toContain('Set PULSE_MCP_SERVERS to a JSON object of servers');
  });

  it('rejects a PULSE_MCP_SERVERS that is not an object', () => {
    expect(configErrorOf(() => parse({}, withEnvServers([{ command: 'c' }]))).message).toContain(
      'expected an object, got array',
    );
  });

  it('names PULSE_MCP_SERVERS and the path inside it for a bad server', () => {
    const error = configErrorOf(() =>
      parse({}, withEnvServers({ jira: { url: 'http://h/mcp', timeout_sec: '9' } })),
    );
    expect(error.file).toBe('PULSE_MCP_SERVERS');
    expect(error.jsonPath).toBe('jira.timeout_sec');
  });
});

describe('parseSourcesConfig: sources', () => {
  const servers = { cal: { command: 'c' }, mail: { url: 'http://h/mcp' } };
  const sourceError = (source: unknown) =>
    configErrorOf(() => parse({ mcpServers: servers, sources: [source] }));
  const base = { name: 's', server: 'cal', tool: 't' };

  it('drops a source whose server is not configured, with a warning that lists the configured ones', () => {
    const config = parse({
      mcpServers: { mail: servers.mail, cal: servers.cal },
      sources: [base, { name: 'x', server: 'y', tool: 't' }],
    });
    expect(config.sources.map((source) => source.name)).toEqual(['s']);
    expect(config.warnings).toEqual([
      'source "x" names server "y", which is not configured; it is ignored. Configured: cal, mail',
    ]);
  });

  it('says "Configured: none" when no server is configured', () => {
    expect(parse({ sources: [base] }).warnings).toEqual([
      'source "s" names server "cal", which is not configured; it is ignored. Configured: none',
    ]);
  });

  it('keeps a disabled source in the list with enabled false', () => {
    const config = parse({ mcpServers: servers, sources: [{ ...base, enabled: false }] });
    expect(config.sources).toHaveLength(1);
    expect(config.sources[0]?.enabled).toBe(false);
  });

  it('rejects two sources with the same name and names the first one', () => {
    const error = configErrorOf(() =>
      parse({ mcpServers: servers, sources: [base, { ...base, tool: 'other' }] }),
    );
    expect(error.jsonPath).toBe('sources[1].name');
    expect(error.message).toContain('"s" is already the name of sources[0]');
    expect(error.fix).toContain('its own name');
  });

  it('rejects duplicate names even when one of the sources names an unknown server', () => {
    expect(
      configErrorOf(() => parse({ mcpServers: servers, sources: [base, { ...base, server: 'nope' }] }))
        .jsonPath,
    ).toBe('sources[1].name');
  });

  it('rejects an interval under one second with the path, the value and a fix', () => {
    const error = sourceError({ ...base, interval_sec: 0.5 });
    expect(error.message).toBe(
      '.pulse/sources.json at sources[0].interval_sec: must be at least 1, got 0.5. Write a number of seconds from 1 to 2147483, e.g. "interval_sec": 300.',
    );
  });

  it('rejects an interval too long for a timer, which would otherwise fire at once', () => {
    expect(sourceError({ ...base, interval_sec: 3_000_000 }).message).toContain('must be at most 2147483');
  });

  it('names a missing required key', () => {
    const error = sourceError({ name: 's', server: 'cal' });
    expect(error.jsonPath).toBe('sources[0].tool');
    expect(error.message).toContain('"tool" is missing');
    expect(error.fix).toContain('"tool": "list_events"');
  });

  it('rejects an empty name', () => {
    expect(sourceError({ ...base, name: '' }).message).toContain('sources[0].name: must not be empty');
  });

  it('rejects a source that is not an object', () => {
    const error = sourceError('cal');
    expect(error.jsonPath).toBe('sources[0]');
    expect(error.fix).toContain('Write each source as an object');
  });

  it('rejects urgency outside 0..1', () => {
    expect(sourceError({ ...base, urgency: 1.5 }).jsonPath).toBe('sources[0].urgency');
    expect(sourceError({ ...base, urgency: -0.1 }).fix).toContain('from 0 to 1');
  });

  it('rejects args that are not an object, and args nested deeper than 64 levels', () => {
    expect(sourceError({ ...base, args: ['x'] }).jsonPath).toBe('sources[0].args');
    let deep: unknown = 'leaf';
    for (let level = 0; level < 70; level++) deep = { deeper: deep };
    const error = sourceError({ ...base, args: deep });
    expect(error.message).toContain('nests deeper than 64 levels');
  });

  it('warns about unknown keys in a source, which often are typos', () => {
    const config = parse({ mcpServers: servers, sources: [{ ...base, interval: 60 }] });
    expect(config.sources[0]?.intervalMs).toBe(300_000);
    expect(config.warnings[0]).toContain('unknown key "interval" in sources[0] is ignored');
  });
});

describe('parseSourcesConfig: rules', () => {
  const servers = { cal: { command: 'c' } };
  const withRules = (rules: unknown) =>
    parse({ mcpServers: servers, sources: [{ name: 's', server: 'cal', tool: 't', rules }] });
  const ruleError = (rules: unknown) => configErrorOf(() => withRules(rules));

  it('reads a title rule and a starts-within rule', () => {
    expect(
      withRules([
        { title_matches: 'urgent|asap', urgency: 0.9 },
        { starts_within_min: 15, urgency: 1 },
      ]).sources[0]?.rules,
    ).toEqual([
      { title_matches: 'urgent|asap', urgency: 0.9 },
      { starts_within_min: 15, urgency: 1 },
    ]);
  });

  it('rejects a regular expression that does not compile, saying why', () => {
    const error = ruleError([{ title_matches: '(unclosed', urgency: 0.9 }]);
    expect(error.jsonPath).toBe('sources[0].rules[0].title_matches');
    expect(error.message).toContain('is not a valid regular expression');
    expect(error.fix).toContain('regular expression');
  });

  it('rejects a rule urgency outside 0..1', () => {
    expect(ruleError([{ starts_within_min: 5, urgency: 2 }]).jsonPath).toBe('sources[0].rules[0].urgency');
  });

  it('rejects a rule with both tests, or with neither', () => {
    const both = ruleError([{ title_matches: 'a', starts_within_min: 5, urgency: 1 }]);
    expect(both.jsonPath).toBe('sources[0].rules[0]');
    expect(both.message).toContain('has both title_matches and starts_within_min');
    expect(both.fix).toContain('one test per rule');
    expect(ruleError([{ urgency: 1 }]).message).toContain(
      'has neither title_matches, starts_within_min nor field',
    );
  });

  it('rejects a negative starts_within_min and a rule without urgency', () => {
    expect(ruleError([{ starts_within_min: -1, urgency: 1 }]).jsonPath).toBe(
      'sources[0].rules[0].starts_within_min',
    );
    expect(ruleError([{ title_matches: 'a' }]).message).toContain('"urgency" is missing');
  });

  it('reads field rules with each test: equals, in, matches, gte, lte', () => {
    const rules = [
      { field: 'reason', equals: 'review_requested', urgency: 0.9 },
      { field: 'fields.priority.name', in: ['High', 'Highest'], urgency: 0.8 },
      { field: 'labels[name=P0].name', matches: '^p0$', urgency: 1 },
      { field: 'userCount', gte: 100, urgency: 0.7 },
      { field: 'priority', lte: 2, urgency: 0.6 },
      { field: 'parent', equals: null, urgency: 0.1 },
    ];
    expect(withRules(rules).sources[0]?.rules).toEqual(rules);
  });

  it.each([
    [[{ field: 'reason', urgency: 1 }], 'sources[0].rules[0]', 'has a field but no test', '"equals", "in"'],
    [
      [{ field: 'reason', equals: 'a', in: ['b'], urgency: 1 }],
      'sources[0].rules[0]',
      'has several tests: equals, in',
      'one test',
    ],
    [[{ equals: 'a', urgency: 1 }], 'sources[0].rules[0]', 'has neither', 'one test per rule'],
    [
      [{ title_matches: 'a', equals: 'a', urgency: 1 }],
      'sources[0].rules[0].equals',
      '"equals" needs a "field" to test',
      '"field": "fields.priority.name"',
    ],
    [[{ field: 'a..b', equals: 1, urgency: 1 }], 'sources[0].rules[0].field', 'is not a path', '"field":'],
    [
      [{ field: 'a', matches: '(', urgency: 1 }],
      'sources[0].rules[0].matches',
      'is not a valid regular expression',
      '"matches":',
    ],
    [[{ field: 'a', in: [], urgency: 1 }], 'sources[0].rules[0].in', 'must be at least 1', '"in": ["High"'],
    [
      [{ field: 'a', gte: '3', urgency: 1 }],
      'sources[0].rules[0].gte',
      'expected number, got string',
      '"gte": 3',
    ],
    [
      [{ field: 'a', equals: { x: 1 }, urgency: 1 }],
      'sources[0].rules[0].equals',
      '',
      '"equals": "review_requested"',
    ],
  ])('refuses the field rule %j at %s, with a fix', (rules, jsonPath, problem, fix) => {
    const error = ruleError(rules);
    expect(error.jsonPath).toBe(jsonPath);
    expect(error.message).toContain(problem);
    expect(error.fix).toContain(fix);
  });

  it('refuses rules testing more than 20 different fields', () => {
    const rules = Array.from({ length: 21 }, (_, i) => ({ field: `f${i}`, equals: 1, urgency: 1 }));
    const error = ruleError(rules);
    expect(error.jsonPath).toBe('sources[0].rules');
    expect(error.message).toContain('tests more than 20 different fields');
    expect(
      withRules([...rules.slice(0, 20), { field: 'f0', equals: 2, urgency: 0 }]).sources[0]?.rules,
    ).toHaveLength(21);
  });
});

describe('parseSourcesConfig: map', () => {
  const servers = { mem: { command: 'c' } };
  const withMap = (map: unknown) =>
    parse({ mcpServers: servers, sources: [{ name: 's', server: 'mem', tool: 't', map }] });
  const mapError = (map: unknown) => configErrorOf(() => withMap(map));

  it('reads every key of a map, an id of several paths among them', () => {
    const map = {
      items: 'entities',
      id: ['repository.full_name', 'number'],
      title: 'name',
      starts_at: 'start.dateTime',
      url: 'html_url',
      detail: 'body',
    };
    expect(withMap(map).sources[0]?.map).toEqual(map);
  });

  it('leaves map out of a source without one', () => {
    expect(
      parse({ mcpServers: servers, sources: [{ name: 's', server: 'mem', tool: 't' }] }).sources[0],
    ).not.toHaveProperty('map');
  });

  it.each([
    [
      { tittle: 'name' },
      'sources[0].map',
      'has unknown key "tittle"',
      'items, id, title, starts_at, url and detail',
    ],
    [{ title: 'a..b' }, 'sources[0].map.title', 'is not a path', '"title": "subject.title"'],
    [{ items: 3 }, 'sources[0].map.items', 'expected string, got number', '"items": "issues"'],
    [{ id: [] }, 'sources[0].map.id', '', '"id": ["repository.full_name", "number"]'],
    [{ url: 'links[web]' }, 'sources[0].map.url', 'write an index', '"url": "html_url"'],
    ['entities', 'sources[0].map', 'expected object, got string', '"map": {"items": "entities"'],
  ])('refuses %j at %s, with a fix', (map, jsonPath, problem, fix) => {
    const error = mapError(map);
    expect(error.jsonPath).toBe(jsonPath);
    expect(error.message).toContain(problem);
    expect(error.fix).toContain(fix);
  });
});

describe('parseSourcesConfig: reflection', () => {
  it("turns seconds into the gate's milliseconds and leaves out what the file does not set", () => {
    const config = parse({
      ...EXAMPLE,
      reflection: {
        threshold: 0.7,
        lease_sec: 90,
        cooldown_sec: 0.5,
        max_attempts: 3,
        reflect_every_sec: 60,
      },
    });
    expect(config.reflection).toEqual({
      thinker: 'rules',
      gate: { threshold: 0.7, leaseMs: 90_000, cooldownMs: 500, maxAttempts: 3, reflectEveryMs: 60_000 },
      model: null,
    });
  });

  it('sets the threshold to 0 for the agent thinker, so every event reaches the agent', () => {
    const config = parse({ ...EXAMPLE, reflection: { thinker: 'agent', threshold: 0.9 } });
    expect(config.reflection).toEqual({ thinker: 'agent', gate: { threshold: 0 }, model: null });
  });

  it.each([
    [{ threshold: 1.5 }, 'reflection.threshold', 'from 0 to 1'],
    [{ lease_sec: 0 }, 'reflection.lease_sec', '"lease_sec": 120'],
    [{ max_attempts: 2.5 }, 'reflection.max_attempts', 'whole number'],
    [{ thinker: 'llm' }, 'reflection.thinker', '"rules"'],
    [{ think_timeout_sec: 3600 }, 'reflection.think_timeout_sec', 'from 1 to 600'],
  ])('refuses %j at %s with a fix', (reflection, jsonPath, fix) => {
    const error = configErrorOf(() => parse({ ...EXAMPLE, reflection }));
    expect(error.jsonPath).toBe(jsonPath);
    expect(error.message).toContain(fix);
  });

  it('refuses a reflection that is not an object', () => {
    expect(configErrorOf(() => parse({ ...EXAMPLE, reflection: [] })).message).toContain(
      'Write reflection as an object',
    );
  });

  it('warns about unknown keys in reflection', () => {
    const config = parse({ ...EXAMPLE, reflection: { lease: 30 } });
    expect(config.warnings).toEqual([
      expect.stringContaining('unknown key "lease" in reflection is ignored'),
    ]);
  });
});

describe('parseSourcesConfig: the file as a whole', () => {
  it('warns about unknown top-level keys instead of failing, but not about $schema', () => {
    const config = parse({ ...EXAMPLE, $schema: 'https://example/schema.json', reflect_every_sec: 60 });
    expect(config.sources).toHaveLength(1);
    expect(config.warnings).toEqual([
      '.pulse/sources.json: unknown key "reflect_every_sec" at the top level is ignored. Known for the file: mcpServers, sources, store_detail, reflection',
    ]);
  });

  it('reports malformed JSON with its line and column and a fix', () => {
    const error = configErrorOf(() => parse('{\n  "sources": [],\n}'));
    expect(error.jsonPath).toBe('line 3, column 1');
    expect(error.message).toMatch(
      /^\.pulse\/sources\.json at line 3, column 1: is not valid JSON \(.+\)\. Fix/,
    );
    expect(error.fix).toContain('trailing comma');
  });

  it('reports a trailing comma in an array with its line and column, which Node 20 does not name', () => {
    const error = configErrorOf(() => parse('{\n  "sources": [\n    {},\n  ]\n}'));
    expect(error.jsonPath).toBe('line 4, column 3');
    expect(error.message).toMatch(
      /^\.pulse\/sources\.json at line 4, column 3: is not valid JSON \(Unexpected token/,
    );
    expect(error.message).not.toContain('..."');
  });

  it('reports truncated JSON at its end', () => {
    expect(configErrorOf(() => parse('{\n  "sources": [')).jsonPath).toBe('line 2, column 15');
  });

  it('keeps the quoted text out of the message when JSON.parse gives no position, and finds the position', () => {
    const error = configErrorOf(() => parse('{"a": }'));
    expect(error.jsonPath).toBe('line 1, column 7');
    expect(error.message).not.toContain('is not valid JSON"');
    expect(error.message).toContain("is not valid JSON (Unexpected token '}')");
  });

  it('rejects a top level that is not an object', () => {
    const error = configErrorOf(() => parse('[]'));
    expect(error.message).toBe(
      '.pulse/sources.json at (top level): expected object, got array. Write a JSON object with "mcpServers" and "sources".',
    );
  });

  it('rejects mcpServers that is not an object, and store_detail that is not a boolean', () => {
    expect(configErrorOf(() => parse({ mcpServers: [] })).fix).toContain('object of named servers');
    expect(configErrorOf(() => parse({ store_detail: 'yes' })).message).toContain(
      'store_detail: expected boolean, got string. Write true or false.',
    );
  });

  it('makes ConfigError an Error with its own name', () => {
    const error = configErrorOf(() => parse('nope'));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigError');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });
});

describe('loadSourcesConfig', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pulse-sources-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const loadError = async (path: string): Promise<ConfigError> => {
    const error = await loadSourcesConfig(path, ENV).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  };

  it('returns null when the file does not exist', async () => {
    expect(await loadSourcesConfig(join(dir, 'sources.json'), ENV)).toBeNull();
  });

  it('reads and parses an existing file, naming it in errors', async () => {
    const path = join(dir, 'sources.json');
    await writeFile(path, JSON.stringify(EXAMPLE));
    expect((await loadSourcesConfig(path, ENV))?.sources).toHaveLength(1);
    await writeFile(path, JSON.stringify({ sources: [{ name: 's' }] }));
    const error = await loadError(path);
    expect(error.file).toBe(path);
    expect(error.message.startsWith(`${path} at sources[0].server:`)).toBe(true);
  });

  it('rejects a file over 1 MiB, saying how big it is', async () => {
    const path = join(dir, 'sources.json');
    await writeFile(path, `{"sources": []}${' '.repeat(1024 * 1024)}`);
    const error = await loadError(path);
    expect(error.message).toContain('more than the limit of 1048576 (1 MiB)');
  });

  it('rejects a path that is a directory, saying so', async () => {
    const path = join(dir, 'sources.json');
    await mkdir(path);
    expect((await loadError(path)).message).toContain('is a folder, not a regular file');
  });

  it.skipIf(process.getuid?.() === 0)(
    'rejects a file it may not read, saying permission was denied',
    async () => {
      const path = join(dir, 'sources.json');
      await writeFile(path, '{}', { mode: 0o000 });
      expect((await loadError(path)).message).toContain('permission denied');
    },
  );
});

describe('configFingerprint', () => {
  const stdioBase: StdioServerConfig = {
    kind: 'stdio',
    name: 'cal',
    command: 'node',
    args: ['cal.js'],
    env: { A: '1', B: '2' },
    cwd: '/srv',
    timeoutMs: 30_000,
  };
  const httpBase: HttpServerConfig = {
    kind: 'http',
    name: 'mail',
    url: 'http://h/mcp',
    headers: { 'X-A': '1', Authorization: 'Bearer t' },
    timeoutMs: 30_000,
  };
  const changed = (a: ServerConfig, b: ServerConfig) => configFingerprint(a) !== configFingerprint(b);

  it('is equal for the same server written in another order, or with its defaults spelled out', () => {
    const short = parse({ mcpServers: { s: { command: 'c', env: { A: '1', B: '2' } } } }).servers.s!;
    const long = parse({
      mcpServers: { s: { timeout_sec: 30, env: { B: '2', A: '1' }, args: [], command: 'c' } },
    }).servers.s!;
    expect(configFingerprint(short)).toBe(configFingerprint(long));
    expect(configFingerprint(short)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with what defines a stdio connection: command, args, their order, env and cwd', () => {
    expect(changed(stdioBase, { ...stdioBase, command: 'deno' })).toBe(true);
    expect(changed(stdioBase, { ...stdioBase, args: ['cal.js', '--v'] })).toBe(true);
    expect(changed({ ...stdioBase, args: ['a', 'b'] }, { ...stdioBase, args: ['b', 'a'] })).toBe(true);
    expect(changed(stdioBase, { ...stdioBase, env: { A: '1', B: '3' } })).toBe(true);
    expect(changed(stdioBase, { ...stdioBase, cwd: undefined })).toBe(true);
    expect(changed(stdioBase, { ...stdioBase, cwd: '/other' })).toBe(true);
  });

  it('changes with the url and any header, including a new bearer token', () => {
    expect(changed(httpBase, { ...httpBase, url: 'http://h/mcp2' })).toBe(true);
    expect(changed(httpBase, { ...httpBase, headers: { 'X-A': '1', Authorization: 'Bearer u' } })).toBe(true);
    expect(changed(httpBase, { ...httpBase, headers: { 'X-A': '1' } })).toBe(true);
  });

  it('does not change with the name, the timeout, or the order of env and header keys', () => {
    expect(changed(stdioBase, { ...stdioBase, name: 'calendar', timeoutMs: 5_000 })).toBe(false);
    expect(changed(stdioBase, { ...stdioBase, env: { B: '2', A: '1' } })).toBe(false);
    expect(changed(httpBase, { ...httpBase, timeoutMs: 1_000 })).toBe(false);
    expect(changed(httpBase, { ...httpBase, headers: { Authorization: 'Bearer t', 'X-A': '1' } })).toBe(
      false,
    );
  });

  it('tells a stdio server from an http one', () => {
    expect(changed(stdioBase, httpBase)).toBe(true);
  });

  it('does not contain the secrets it was made from', () => {
    expect(configFingerprint(httpBase)).not.toContain('Bearer');
  });
});

describe('sourceFingerprint', () => {
  const source: SourceConfig = {
    name: 's',
    server: 'cal',
    tool: 'list_events',
    args: { max: 10, calendar: 'work' },
    intervalMs: 300_000,
    enabled: true,
    urgency: 0.5,
    rules: [{ title_matches: 'urgent', urgency: 0.9 }],
  };
  const changed = (other: SourceConfig) => sourceFingerprint(source) !== sourceFingerprint(other);

  it('changes with what the poller does: name, server, tool, args, interval and enabled', () => {
    expect(changed({ ...source, name: 't' })).toBe(true);
    expect(changed({ ...source, server: 'mail' })).toBe(true);
    expect(changed({ ...source, tool: 'list' })).toBe(true);
    expect(changed({ ...source, args: { max: 11, calendar: 'work' } })).toBe(true);
    expect(changed({ ...source, args: { max: 10 } })).toBe(true);
    expect(changed({ ...source, intervalMs: 60_000 })).toBe(true);
    expect(changed({ ...source, enabled: false })).toBe(true);
  });

  it('changes with the map, so a new map re-reads the items at once', () => {
    expect(changed({ ...source, map: { title: 'subject.title' } })).toBe(true);
    expect(sourceFingerprint({ ...source, map: { title: 'a' } })).not.toBe(
      sourceFingerprint({ ...source, map: { title: 'b' } }),
    );
  });

  it('does not change with urgency or rules, which the thinker reads from the current config', () => {
    expect(changed({ ...source, urgency: 0.6 })).toBe(false);
    expect(changed({ ...source, rules: [{ title_matches: 'urgent', urgency: 1 }] })).toBe(false);
    expect(changed({ ...source, rules: [] })).toBe(false);
  });

  it('does not change with the order of keys in args or nested in it', () => {
    expect(changed({ ...source, args: { calendar: 'work', max: 10 } })).toBe(false);
    const nested = { ...source, args: { q: { a: 1, b: [1, { y: 1, x: 2 }] } } };
    expect(sourceFingerprint(nested)).toBe(
      sourceFingerprint({ ...source, args: { q: { b: [1, { x: 2, y: 1 }], a: 1 } } }),
    );
  });

  it('is equal for the same source parsed from differently written files', () => {
    const servers = { cal: { command: 'c' } };
    const a = parse({ mcpServers: servers, sources: [{ name: 's', server: 'cal', tool: 't' }] }).sources[0]!;
    const b = parse({
      mcpServers: servers,
      sources: [
        { tool: 't', server: 'cal', name: 's', interval_sec: 300, enabled: true, urgency: 0.5, rules: [] },
      ],
    }).sources[0]!;
    expect(sourceFingerprint(a)).toBe(sourceFingerprint(b));
  });
});

describe('redactSecrets', () => {
  it('replaces every occurrence of each secret with ***', () => {
    expect(redactSecrets('token abc, again abc; key xyz', ['abc', 'xyz'])).toBe(
      'token ***, again ***; key ***',
    );
  });

  it('replaces the longest secret whole when one secret contains another', () => {
    expect(redactSecrets('Authorization: Bearer tok', ['tok', 'Bearer tok'])).toBe('Authorization: ***');
  });

  it('treats secrets as text, not as regular expressions', () => {
    expect(redactSecrets('a.b a+b axb', ['a.b', 'a+b'])).toBe('*** *** axb');
  });

  it('leaves text alone when there are no secrets, and ignores empty ones', () => {
    expect(redactSecrets('nothing here', [])).toBe('nothing here');
    expect(redactSecrets('nothing here', [''])).toBe('nothing here');
  });

  it('removes every secret of a parsed config from an error report', () => {
    const config = parse(EXAMPLE);
    const report = `connect ${JSON.stringify(config.servers)} failed`;
    const redacted = redactSecrets(report, config.secrets);
    expect(redacted).not.toContain('cal-key-123');
    expect(redacted).not.toContain('mail-token-456');
    expect(redacted).toContain('"Authorization":"***"');
  });
});
