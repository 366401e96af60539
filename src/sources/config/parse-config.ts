import { z } from 'zod';
import type { SourceConfig, SourcesConfig } from './config.js';
import { ConfigError } from './config-error.js';
import {
  compareText,
  type Fixes,
  formatPath,
  isRecord,
  type Parsing,
  parseJson,
  parseWith,
  warnUnknownKeys,
} from './config-parsing.js';
import { mergeServers } from './merge-servers.js';
import { reflectionOf } from './reflection-config.js';
import type { ConfiguredServer } from './server-config.js';
import { sourceOf } from './source-config.js';
import { variableReferences } from './variables.js';

const fileSchema = z.object({
  mcpServers: z.record(z.string(), z.unknown()).default({}),
  sources: z.array(z.unknown()).default([]),
  store_detail: z.boolean().default(false),
  reflection: z.unknown().optional(),
});

const FILE_FIXES: Fixes = {
  mcpServers:
    'Write mcpServers as an object of named servers, e.g. {"cal": {"command": "node", "args": ["cal.js"]}}.',
  sources:
    'Write sources as a list, e.g. [{"name": "cal-upcoming", "server": "cal", "tool": "list_events"}].',
  store_detail: 'Write true or false.',
  '': 'Write a JSON object with "mcpServers" and "sources".',
};

/** Warns that a source's args hold `${VAR}`, which goes to the tool as written. */
const warnArgsVariables = (source: SourceConfig, index: number, parsing: Parsing) => {
  const references = variableReferences(source.args, ['sources', index, 'args']);
  if (references.length === 0) return;
  const { variable, path } = references[0]!;
  parsing.warnings.push(
    `${parsing.file}: ${formatPath(path)} holds \${${variable}}, which is sent to the tool as written: pulse expands \${VAR} in servers only (their env, args, url, headers).`,
  );
};

/** Says which sources do not run because their server is disabled, and why. */
const warnDisabledServers = (servers: ConfiguredServer[], sources: SourceConfig[], parsing: Parsing) => {
  for (const { summary } of servers) {
    if (summary.disabled === null) continue;
    const users = sources.filter((source) => source.server === summary.name).map((source) => source.name);
    const stopped =
      users.length === 0
        ? 'no source uses it'
        : `its source${users.length === 1 ? '' : 's'} ${users.join(', ')} ${users.length === 1 ? 'does' : 'do'} not run`;
    parsing.warnings.push(`server "${summary.name}" is disabled, ${stopped}: ${summary.disabled}`);
  }
};

/**
 * Validates `.pulse/sources.json` (and the servers of `PULSE_MCP_SERVERS`), expands `${VAR}`
 * in server strings, and drops sources whose server is not configured, with a warning. A server
 * with an unset `${VAR}` is kept, disabled, with the reason: its sources do not run, the others do.
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
  const servers = mergeServers(top.mcpServers, parsing);

  const firstIndexByName = new Map<string, number>();
  const sources: SourceConfig[] = [];
  const configured = servers.map(({ summary }) => summary.name).sort(compareText);
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
    warnArgsVariables(source, index, parsing);
    if (configured.includes(source.server)) {
      sources.push(source);
    } else {
      parsing.warnings.push(
        `source "${source.name}" names server "${source.server}", which is not configured; it is ignored. Configured: ${configured.join(', ') || 'none'}`,
      );
    }
  });

  warnDisabledServers(servers, sources, parsing);

  return {
    servers: Object.fromEntries(
      servers.flatMap(({ summary, config }) => (config === null ? [] : [[summary.name, config]])),
    ),
    serverSummaries: servers.map(({ summary }) => summary),
    sources,
    storeDetail: top.store_detail,
    reflection: reflectionOf(top.reflection, ['reflection'], parsing),
    warnings: parsing.warnings,
    secrets: [...parsing.secrets],
  };
};
