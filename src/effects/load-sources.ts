import type { PolledSource } from '../../machines/external.js';
import { GATE_DEFAULTS } from '../../machines/gate-settings.js';
import type { LoadedSources } from '../../machines/sources-context.js';
import type { ClientPool } from '../sources/client/client-pool.js';
import type { SourcesConfig } from '../sources/config/config.js';
import { configFingerprint, sourceFingerprint } from '../sources/config/fingerprint.js';
import { parseSourcesFile, readSourcesFile, type SourcesFile } from '../sources/config/load-config.js';
import { maskedUrl } from '../sources/config/server-summary.js';
import { trustView } from '../trust/trust-view.js';

/** The parts of the config that the actors may see (no server secrets), and what the effects keep. */
export interface SourcesRuntime {
  config: SourcesConfig | null;
}

/** Why a server of an untrusted file did not start, with the one command that trusts it. */
export const untrustedReason = (hash: string, command: string): string =>
  `not started: .pulse/sources.json (${hash}) is not trusted. To trust it: ${command}`;

/**
 * An untrusted file, as status shows it: its servers as written, each not started and why; no
 * source, the gate's defaults and the rule thinker. Read as written: nothing is expanded.
 */
const untrustedSources = (file: SourcesFile, command: string): LoadedSources => {
  const view = trustView(file.text);
  const disabled = untrustedReason(file.hash, command);
  return {
    sources: [],
    servers: view.servers.map(({ cwd: _cwd, ...server }) => ({ ...server, disabled })),
    fingerprints: {},
    warnings: [],
    gate: { ...GATE_DEFAULTS },
    thinker: { kind: 'rules', model: null },
    trust: {
      status: 'untrusted',
      hash: file.hash,
      command,
      model: view.model === null ? null : maskedUrl(view.model),
    },
  };
};

/**
 * Loads `sources.json`, hands the servers to the client pool (which keeps unchanged clients),
 * and returns the sources with fingerprints that change iff a poller must restart.
 * A missing file means no sources; a broken one throws a ConfigError and changes nothing.
 * A file whose bytes its user has not trusted (`trusted`) is not parsed: the pool closes every
 * client, so nothing from it or from content trusted before runs.
 */
export const createSourcesLoader =
  ({
    path,
    env,
    pool,
    runtime,
    trusted,
    trustCommand,
  }: {
    path: string;
    env: Record<string, string | undefined>;
    pool: ClientPool;
    runtime: SourcesRuntime;
    /** Whether the user trusts sources.json with this hash in this project. */
    trusted: (hash: string) => boolean;
    /** The command that trusts it, for the messages. */
    trustCommand: string;
  }) =>
  async (): Promise<LoadedSources> => {
    const file = await readSourcesFile(path);
    if (file !== null && !trusted(file.hash)) {
      runtime.config = null;
      await pool.update({});
      return untrustedSources(file, trustCommand);
    }
    const config =
      file === null
        ? null
        : await parseSourcesFile(file, env).catch((error: unknown) => {
            // A broken file the user trusted: the machine must not keep saying it is untrusted.
            throw Object.assign(error as Error, { trust: { status: 'trusted', hash: file.hash } });
          });
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
    const trust =
      file === null ? ({ status: 'none' } as const) : ({ status: 'trusted', hash: file.hash } as const);
    return { sources, servers, fingerprints, warnings: config?.warnings ?? [], gate, thinker, trust };
  };
