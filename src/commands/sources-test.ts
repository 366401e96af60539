import type { SourceTestResult } from '../../machines/sources-context.js';
import { failedTest, sourceBlocked } from '../../machines/sources-decisions.js';
import { daemonServing } from '../hooks/find-daemon.js';
import { ClientPool } from '../sources/client/client-pool.js';
import { toolSummary } from '../sources/client/tool-safety.js';
import { parseSourcesFile, readSourcesFile } from '../sources/config/load-config.js';
import { readingOf } from '../sources/items/reading.js';
import { MAX_SOURCE_TEST_MS, runSourceTest } from '../sources/source-test.js';
import type { Discovery } from '../store/daemon-record.js';
import { DaemonTokenError, tokenHeaders, tokenRefusal } from '../store/daemon-token.js';
import type { PulsePaths } from '../store/paths.js';
import { terminalText } from '../text/terminal-text.js';
import { trustCommand } from '../trust/trust-command.js';
import { isTrusted } from '../trust/trust-store.js';

/** A source test and where it ran: in the daemon (its environment), or in this shell when none answered. */
export interface SourceTestReport extends SourceTestResult {
  ran_in: 'daemon' | 'this shell';
  /** Says so when the test did not run in the daemon. */
  note: string | null;
}

/** The daemon's answer, or null when no daemon answers there (then the CLI tests by itself). */
const askDaemon = async (
  discovery: Discovery,
  name: string,
  raw: boolean,
  env: NodeJS.ProcessEnv,
): Promise<SourceTestResult | null> => {
  let response: Response;
  try {
    response = await fetch(new URL('sources/test', discovery.url), {
      method: 'POST',
      headers: { ...tokenHeaders(env), 'content-type': 'application/json' },
      body: JSON.stringify({ source: name, raw }),
      // The daemon bounds the test itself; this only guards against a daemon that hangs.
      signal: AbortSignal.timeout(MAX_SOURCE_TEST_MS + 30_000),
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError')
      throw new Error(`the daemon at ${discovery.url} did not answer the test of "${name}"`);
    return null;
  }
  if (response.status === 401) throw new DaemonTokenError(tokenRefusal(discovery.url, env));
  const body = (await response.json().catch(() => null)) as (SourceTestResult & { error?: unknown }) | null;
  if (response.ok && body !== null) return body;
  // Something else holds the port of a daemon that is gone: test here instead.
  if (typeof body?.error !== 'string') return null;
  throw new Error(body.error);
};

/** Tests in this process, with this shell's environment: what `pulse sources test` does when no daemon answers. */
const testHere = async (paths: PulsePaths, name: string, raw: boolean, env: NodeJS.ProcessEnv) => {
  const file = paths.sources;
  const read = await readSourcesFile(file);
  // A test starts the server: never for content its user has not trusted.
  if (read !== null && !isTrusted(paths.projectRoot, read.hash, env))
    throw new Error(
      `${file} is not trusted (${read.hash}), so pulse starts none of its servers, for a test neither. To trust it: ${trustCommand(paths.projectRoot)}`,
    );
  const config = read === null ? null : await parseSourcesFile(read, env);
  const source = config?.sources.find((s) => s.name === name);
  if (!config || !source) {
    const known = config?.sources.map((s) => s.name).join(', ') || 'none';
    throw new Error(`No source "${name}" in ${file}. Known: ${known}.`);
  }
  const blocked = sourceBlocked(source, config.serverSummaries);
  if (blocked !== null)
    return failedTest(source.name, source.server, `source "${name}" cannot run: ${blocked}`);
  const pool = new ClientPool({ [source.server]: config.servers[source.server]! });
  try {
    return await runSourceTest(pool, source, { raw, secrets: config.secrets, reading: readingOf(source) });
  } finally {
    await pool.close();
  }
};

/**
 * `pulse sources test NAME`: asks the running daemon to call the source's tool once, with its
 * own clients and environment; when no daemon answers, calls it from here, with this shell's
 * environment, and says so. Marks nothing seen either way.
 */
export const testSource = async (
  paths: PulsePaths,
  name: string,
  { raw = false, env = process.env, port }: { raw?: boolean; env?: NodeJS.ProcessEnv; port?: number } = {},
): Promise<SourceTestReport> => {
  const discovery = daemonServing(paths.projectRoot, port);
  const fromDaemon = discovery ? await askDaemon(discovery, name, raw, env) : null;
  if (fromDaemon !== null) return { ...fromDaemon, ran_in: 'daemon', note: null };
  const note = `${discovery ? 'The daemon of this project does not answer' : 'No daemon runs for this project'}: tested with this shell's environment, which may differ from the one pulse starts with.`;
  return { ...(await testHere(paths, name, raw, env)), ran_in: 'this shell', note };
};

/** The tool's answer: the keys found, then its JSON a line at a time, each safe for a terminal. */
const formatRaw = ({ raw }: SourceTestResult): string[] => {
  if (raw === null) return [];
  return [
    'keys found:',
    ...raw.keys.map(({ where, keys }) => `  ${where}: ${keys.join(', ') || '(none)'}`),
    `what the tool answered${raw.cut > 0 ? ` (the first ${raw.text.length} characters; ${raw.cut} more cut)` : ''}:`,
    ...raw.text.split('\n'),
  ];
};

/** The readable form of `pulse sources test`, safe for a terminal whatever the server answered. */
export const formatSourceTest = (report: SourceTestReport): string => {
  const lines = report.note === null ? [] : [`note: ${report.note}`];
  const failed = report.tool?.verdict === 'refused' ? 'refused, not called' : 'poll failed';
  if (!report.ok) lines.push(`${report.source}: ${failed}: ${report.error}`);
  else {
    lines.push(`${report.source}: ${report.item_count} item(s) (nothing marked seen)`);
    for (const item of report.items)
      lines.push(`- ${item.item_id}  ${item.title}${item.starts_at ? `  (starts ${item.starts_at})` : ''}`);
    const more = report.item_count - report.items.length;
    if (more > 0) lines.push(`… and ${more} more`);
  }
  if (report.tool !== null) lines.push(`tool annotations: ${toolSummary(report.tool)}`);
  if (report.tool?.verdict === 'undeclared') lines.push(`warning: ${report.tool.message}`);
  lines.push(...formatRaw(report));
  return lines.map(terminalText).join('\n');
};
