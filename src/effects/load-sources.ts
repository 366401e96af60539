import type { PolledSource } from '../../machines/external.js';
import { GATE_DEFAULTS } from '../../machines/gate-settings.js';
import type { LoadedSources } from '../../machines/sources.js';
import type { ClientPool } from '../sources/client/client-pool.js';
import type { SourcesConfig } from '../sources/config/config.js';
import { configFingerprint, sourceFingerprint } from '../sources/config/fingerprint.js';
import { loadSourcesConfig } from '../sources/config/load-config.js';

/** The parts of the config that the actors may see (no server secrets), and what the effects keep. */
export interface SourcesRuntime {
  config: SourcesConfig | null;
}

/**
 * Loads `sources.json`, hands the servers to the client pool (which keeps unchanged clients),
 * and returns the sources with fingerprints that change iff a poller must restart.
 * A missing file means no sources; a broken one throws a ConfigError and changes nothing.
 */
export const createSourcesLoader =
  ({
    path,
    env,
    pool,
    runtime,
  }: {
    path: string;
    env: Record<string, string | undefined>;
    pool: ClientPool;
    runtime: SourcesRuntime;
  }) =>
  async (): Promise<LoadedSources> => {
    const config = await loadSourcesConfig(path, env);
    runtime.config = config;
    await pool.update(config?.servers ?? {});
    const sources: PolledSource[] = (config?.sources ?? []).map((s) => ({
      name: s.name,
      server: s.server,
      tool: s.tool,
      args: s.args,
      intervalMs: s.intervalMs,
      enabled: s.enabled,
      allowSideEffects: s.allowSideEffects ?? false,
    }));
    const fingerprints: Record<string, string> = {};
    for (const source of config?.sources ?? []) {
      const server = config!.servers[source.server];
      fingerprints[source.name] = `${sourceFingerprint(source)}|${server ? configFingerprint(server) : ''}`;
    }
    const gate = { ...GATE_DEFAULTS, ...config?.reflection.gate };
    const servers = config?.serverSummaries ?? [];
    const thinker = {
      kind: config?.reflection.thinker ?? 'rules',
      model: config?.reflection.model?.model ?? null,
    };
    return { sources, servers, fingerprints, warnings: config?.warnings ?? [], gate, thinker };
  };
