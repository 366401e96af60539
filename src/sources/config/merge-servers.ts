import { ConfigError } from './config-error.js';
import { isRecord, type Parsing, parseJson, TOP_LEVEL, typeName } from './config-parsing.js';
import { type ConfiguredServer, serverOf } from './server-config.js';

const ENV_SERVERS = 'PULSE_MCP_SERVERS';

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

/**
 * The file's mcpServers, then those of `PULSE_MCP_SERVERS` the file does not name; a server in
 * both keeps the file's entry, with a warning.
 */
export const mergeServers = (fileServers: Record<string, unknown>, parsing: Parsing): ConfiguredServer[] => {
  const fromEnv = serversFromEnv(parsing);
  const envParsing: Parsing = { ...parsing, file: ENV_SERVERS };
  const servers = Object.entries(fileServers).map(([name, server]) =>
    serverOf(name, server, ['mcpServers', name], parsing),
  );
  for (const [name, server] of Object.entries(fromEnv)) {
    if (Object.hasOwn(fileServers, name)) {
      parsing.warnings.push(
        `server "${name}" is configured in both ${parsing.file} and ${ENV_SERVERS}; the file's entry is used.`,
      );
    } else {
      servers.push(serverOf(name, server, [name], envParsing));
    }
  }
  return servers;
};
