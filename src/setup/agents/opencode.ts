import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dialectOf } from '../../hooks/events.js';
import { agentsMdPart, type PluginPlace, type SetupDialect } from '../agent-parts.js';
import { isJsonObject, type JsonChange, jsonEdit } from '../json-edit.js';
import { mcpServerChange } from '../mcp-entry.js';
import { OPENCODE_PLUGIN_FILE, pluginEdit, pluginHook } from '../opencode-plugin-file.js';
import { allOf } from '../permissions.js';

const PLUGIN = {
  file: OPENCODE_PLUGIN_FILE,
  transports: ['plugin'],
  installed: pluginHook,
} as const satisfies PluginPlace;

/** The project's opencode config: `opencode.json`, or the user's `opencode.jsonc` when that is the one there. */
const configFile = (project: string) =>
  existsSync(join(project, 'opencode.jsonc')) && !existsSync(join(project, 'opencode.json'))
    ? 'opencode.jsonc'
    : 'opencode.json';

/**
 * An `allow` rule for each of `tools` in `permission`, keeping the user's rules: added after them,
 * since opencode goes by the last rule that matches. A `permission` that is one action stands for
 * `{"*": action}`, as opencode reads it; a rule of the user's for one of these tools is a conflict.
 */
const allowTools =
  (tools: readonly string[]): JsonChange =>
  (doc, { force, forceCommand }) => {
    const permission = typeof doc.permission === 'string' ? { '*': doc.permission } : (doc.permission ?? {});
    if (!isJsonObject(permission)) {
      return {
        kind: 'invalid',
        problem: 'has a "permission" that is neither an action nor an object',
        fix: 'Make "permission" an object of rules, then run this again.',
      };
    }
    const theirs = tools.filter((tool) => permission[tool] !== undefined && permission[tool] !== 'allow');
    if (theirs.length > 0 && !force) {
      return {
        kind: 'conflict',
        problem: `has "permission.${theirs[0]}": ${JSON.stringify(permission[theirs[0]!])}, so opencode run rejects that pulse tool; left as it is`,
        fix: `\`${forceCommand}\` allows it (after a backup).`,
      };
    }
    const missing = tools.filter((tool) => permission[tool] !== 'allow');
    if (missing.length === 0 && doc.permission === permission) return { kind: 'unchanged' };
    for (const tool of missing) permission[tool] = 'allow';
    doc.permission = permission;
    return theirs.length > 0
      ? { kind: 'changed', replaced: `your permission rules for ${theirs.join(', ')}` }
      : { kind: 'changed' };
  };

/**
 * opencode 1.18.33: pulse's remote MCP server and an `allow` rule for each of its three tools in
 * the project's `opencode.json`, pulse's plugin in `.opencode/plugins/`, and `AGENTS.md`.
 */
export const opencodeSetup: SetupDialect = {
  title: 'opencode',
  hooks: PLUGIN,
  build: (target) => ({
    parts: [
      {
        part: 'mcp',
        file: configFile(target.project),
        why: "opencode fills {env:PULSE_TOKEN} from its environment (empty when unset); an allow rule for each of pulse's three tools, nothing else, since opencode run rejects a tool that asks",
        edit: jsonEdit(
          allOf(
            mcpServerChange('mcp', {
              type: 'remote',
              url: target.url,
              headers: { Authorization: 'Bearer {env:PULSE_TOKEN}' },
            }),
            allowTools(dialectOf('opencode').pulseToolNames('pulse')),
          ),
        ),
      },
      {
        part: 'hooks',
        file: PLUGIN.file,
        why: `opencode has no command hooks: pulse's plugin posts each hook from opencode's own process. It names this project's path and port on this machine: keep ${PLUGIN.file} out of git`,
        edit: pluginEdit({
          port: target.port,
          project: target.project,
          server: 'pulse',
          pulse: target.pulse,
        }),
      },
      agentsMdPart(),
    ],
    notes: [
      'opencode asks nothing before it uses these: 1.18.33 loads a project\'s opencode.json and .opencode/plugins/ and connects their MCP servers with no trust step and no approval ("opencode mcp" has no approve). It skips them all when OPENCODE_DISABLE_PROJECT_CONFIG is set, and the plugin with --pure.',
      "A stop while a replan is pending is sent back as the agent's next message once per event in opencode's TUI and under opencode serve; opencode run exits when the agent stops, so there pulse holds the next tool call instead.",
      "pulse's line for you (the daemon is down or slow, a stop not acknowledged) shows as a toast in the TUI and in opencode's log; opencode run prints it on stderr.",
      'On its first start in the project opencode npm-installs @opencode-ai/plugin into .opencode/ (for any plugin folder; pulse\'s plugin needs nothing of it): see "opencode" in docs/agent-setup.md for a closed network.',
    ],
  }),
};
