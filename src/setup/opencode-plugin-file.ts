import { createHash } from 'node:crypto';
import { VERSION } from '../package/version.js';
import type { FileEdit } from './file-edit.js';
import type { FoundPulseHook } from './hook-handlers.js';
import { PLUGIN_BODY } from './opencode-plugin.generated.js';

/** pulse's plugin in the project: opencode loads every `.opencode/plugins/*.{js,ts}` (under Bun). */
export const OPENCODE_PLUGIN_FILE = '.opencode/plugins/pulse.js';

/** The values the plugin is written with: the only ones that differ between projects. */
export interface PluginSetup {
  port: number;
  project: string;
  /** The name of pulse's MCP server in opencode.json. */
  server: string;
  /** How the user runs pulse, for the line that says how to start the daemon. */
  pulse: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The first line: whose file it is, which pulse wrote it, and the hash of the rest as it wrote it. */
const MARKER =
  /^\/\/ pulse-agent (\S+) opencode plugin, written by `pulse setup opencode` \(sha256 ([0-9a-f]{64}) /;

/** The plugin file for a setup: the marker line, `const PULSE = {…}`, the compiled plugin. */
export const pluginFileText = (setup: PluginSetup): string => {
  const rest = `const PULSE = ${JSON.stringify(setup)};\n${PLUGIN_BODY}`;
  return `// pulse-agent ${VERSION} opencode plugin, written by \`pulse setup opencode\` (sha256 ${sha256(rest)} of the lines below); pulse replaces it while they stay as they are.\n${rest}`;
};

/** A plugin file read back: whether it is pulse's, the setup it names, and whether it is as pulse wrote it. */
type ReadPlugin =
  | { kind: 'other' }
  | { kind: 'edited' }
  | { kind: 'pulse'; setup: Pick<PluginSetup, 'port' | 'project'> };

const readPlugin = (text: string): ReadPlugin => {
  const newline = text.indexOf('\n');
  const marker = MARKER.exec(newline === -1 ? text : text.slice(0, newline));
  if (marker === null) return { kind: 'other' };
  const rest = text.slice(newline + 1);
  if (sha256(rest) !== marker[2]) return { kind: 'edited' };
  try {
    const setup = JSON.parse(/^const PULSE = (.*);\n/.exec(rest)?.[1] ?? '') as PluginSetup;
    return { kind: 'pulse', setup };
  } catch {
    return { kind: 'edited' };
  }
};

/** pulse's plugin as a hook found in the project (its daemon's port and project), or null when the file is not pulse's as it wrote it. */
export const pluginHook = (text: string): FoundPulseHook | null => {
  const found = readPlugin(text);
  return found.kind === 'pulse' ? { transport: 'plugin', ...found.setup } : null;
};

/**
 * The plugin file's edit: created; replaced when it is pulse's, as pulse wrote it, for this port
 * and project (an older pulse's, say); a conflict, replaced only with `force`, when it is not
 * pulse's, was changed by hand, or reaches another port or project.
 */
export const pluginEdit =
  (setup: PluginSetup): FileEdit =>
  (current, { force, forceCommand }) => {
    const text = pluginFileText(setup);
    if (current === null) return { kind: 'write', text };
    if (current === text) return { kind: 'unchanged' };
    const found = readPlugin(current);
    const other =
      found.kind === 'other'
        ? 'is not pulse\'s plugin (its first line is not "// pulse-agent <version> opencode plugin")'
        : found.kind === 'edited'
          ? "is pulse's plugin, changed since pulse wrote it"
          : found.setup.port !== setup.port || found.setup.project !== setup.project
            ? `is pulse's plugin for another port or project (127.0.0.1:${found.setup.port}, ${found.setup.project})`
            : null;
    if (other === null) return { kind: 'write', text };
    if (force) return { kind: 'write', text, replaced: `a plugin that ${other}` };
    return {
      kind: 'conflict',
      problem: `${other}; left as it is`,
      fix: `\`${forceCommand}\` writes pulse's plugin over it (after a backup).`,
    };
  };
