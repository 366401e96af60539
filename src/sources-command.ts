import { join } from 'node:path';
import { ClientPool } from './sources/client-pool.js';
import { extractItems } from './sources/extract.js';
import { loadSourcesConfig } from './sources/load-config.js';
import { readingOf } from './sources/reading.js';
import { redactSecrets } from './sources/redact.js';
import { fetchSystemStatus, formatPoller } from './status.js';
import { readDiscovery } from './store/discovery-file.js';
import type { PulsePaths } from './store/paths.js';
import type { PollerStatus } from './system-status.js';
import { terminalText } from './terminal-text.js';

/** `pulse sources list`: the running daemon's pollers, or the configured sources when none runs. */
export const listSources = async (
  paths: PulsePaths,
  env: NodeJS.ProcessEnv,
): Promise<{ running: boolean; pollers: PollerStatus[]; error: string | null }> => {
  const discovery = readDiscovery(paths.dir);
  const live = discovery ? await fetchSystemStatus(discovery) : null;
  if (live) return { running: true, pollers: live.sources.pollers, error: live.sources.error };
  const config = await loadSourcesConfig(join(paths.dir, 'sources.json'), env);
  const pollers = (config?.sources ?? []).map(
    (s): PollerStatus => ({
      source: s.name,
      server: s.server,
      tool: s.tool,
      enabled: s.enabled,
      state: s.enabled ? 'not running' : 'disabled',
      interval_sec: s.intervalMs / 1000,
      polls: 0,
      last_poll_at: null,
      last_duration_ms: null,
      next_poll_at: null,
      last_error: null,
      failures: 0,
      items_seen: 0,
      catch_ups: 0,
    }),
  );
  return { running: false, pollers, error: null };
};

/** The readable form of `pulse sources list`, safe for a terminal. */
export const formatSourceList = ({
  running,
  pollers,
  error,
}: Awaited<ReturnType<typeof listSources>>): string => {
  const lines = [running ? 'daemon running' : 'daemon not running (start it with `pulse start`)'];
  if (error) lines.push(`config error: ${error}`);
  if (pollers.length === 0) lines.push('no sources configured in .pulse/sources.json');
  for (const poller of pollers) lines.push(formatPoller(poller));
  return lines.map(terminalText).join('\n');
};

export interface SourceTestResult {
  source: string;
  ok: boolean;
  error: string | null;
  items: Array<{ item_id: string; title: string; starts_at: string | null }>;
}

/** `pulse sources test NAME`: polls one source once, now, and marks nothing seen. */
export const testSource = async (
  paths: PulsePaths,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<SourceTestResult> => {
  const config = await loadSourcesConfig(join(paths.dir, 'sources.json'), env);
  const source = config?.sources.find((s) => s.name === name);
  if (!config || !source) {
    const known = config?.sources.map((s) => s.name).join(', ') || 'none';
    throw new Error(`No source "${name}" in ${join(paths.dir, 'sources.json')}. Known: ${known}.`);
  }
  const server = config.servers[source.server];
  const pool = new ClientPool(server ? { [source.server]: server } : {});
  try {
    const result = await pool.callTool(source.server, source.tool, source.args);
    const items = extractItems(result, readingOf(source)).map((item) => ({
      item_id: item.itemId,
      title: item.title,
      starts_at: item.startsAt,
    }));
    return { source: name, ok: true, error: null, items };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    return { source: name, ok: false, error: redactSecrets(text, config.secrets), items: [] };
  } finally {
    await pool.close();
  }
};

/** The readable form of `pulse sources test`, safe for a terminal whatever the server answered. */
export const formatSourceTest = (result: SourceTestResult): string => {
  if (!result.ok) return terminalText(`${result.source}: poll failed: ${result.error}`);
  const lines = [`${result.source}: ${result.items.length} item(s) (nothing marked seen)`];
  for (const item of result.items)
    lines.push(`- ${item.item_id}  ${item.title}${item.starts_at ? `  (starts ${item.starts_at})` : ''}`);
  return lines.map(terminalText).join('\n');
};
