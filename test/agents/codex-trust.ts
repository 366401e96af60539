import { appendFile } from 'node:fs/promises';
import type { CodexHome } from './codex.js';
import { openAppServer } from './codex-app-server.js';

// The two steps a Codex user takes before a project's `.codex/` files do anything: trust the
// project, then review its hooks. Both end up in `$CODEX_HOME/config.toml`.

/**
 * Trusts a project as `codex exec --trust` and the TUI's trust prompt do: a
 * `[projects."<absolute path>"] trust_level = "trusted"` table in the user's config.
 */
export const trustProject = (home: CodexHome, project: string): Promise<void> =>
  appendFile(home.configFile, `\n[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n`);

/** One hook as `hooks/list` of the app server reports it. */
export interface ListedHook {
  key: string;
  eventName: string;
  command?: string;
  currentHash: string;
  trustStatus: 'managed' | 'untrusted' | 'trusted' | 'modified';
  enabled: boolean;
}

/** The hooks Codex finds for a project folder, with their review state (read-only). */
export const listHooks = async (home: CodexHome, project: string): Promise<ListedHook[]> => {
  const server = await openAppServer(home);
  try {
    const answer = await server.request<{ data: Array<{ hooks: ListedHook[] }> }>('hooks/list', {
      cwds: [project],
    });
    if (answer.result === undefined) throw new Error(`hooks/list failed: ${JSON.stringify(answer.error)}`);
    return answer.result.data.flatMap((entry) => entry.hooks);
  } finally {
    server.close();
  }
};

/**
 * Reviews (trusts) every hook of a project as the TUI's `/hooks` screen does: for each hook
 * `hooks/list` reports, `[hooks.state."<key>"] trusted_hash = "<its current hash>"`, written with
 * the app server's `config/batchWrite` (which refuses to write a user config it finds invalid).
 */
export const reviewHooks = async (home: CodexHome, project: string): Promise<ListedHook[]> => {
  const hooks = await listHooks(home, project);
  const state = Object.fromEntries(hooks.map((hook) => [hook.key, { trusted_hash: hook.currentHash }]));
  const server = await openAppServer(home);
  try {
    const answer = await server.request('config/batchWrite', {
      edits: [{ keyPath: 'hooks.state', mergeStrategy: 'upsert', value: state }],
    });
    if (answer.error !== undefined) throw new Error(`config/batchWrite failed: ${answer.error.message}`);
  } finally {
    server.close();
  }
  return hooks;
};
