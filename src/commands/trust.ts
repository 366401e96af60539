import { createInterface } from 'node:readline/promises';
import { readSourcesFile, type SourcesFile } from '../sources/config/load-config.js';
import type { PulsePaths } from '../store/paths.js';
import { terminalText } from '../text/terminal-text.js';
import { trustCommand } from '../trust/trust-command.js';
import { isSourcesHash, isTrusted, realProject, recordTrust, revokeTrust } from '../trust/trust-store.js';
import { type TrustView, trustView } from '../trust/trust-view.js';

/** `pulse trust`'s flags, as commander parses them. */
export interface TrustOptions {
  yes?: boolean;
  revoke?: boolean;
  show?: boolean;
  printHash?: boolean;
}

/** What `pulse trust` prints, and whether it failed (exit 1). */
export interface TrustOutcome {
  text: string;
  ok: boolean;
}

const listed = (names: readonly string[]) => names.join(', ');

/** What the file would have pulse run, connect to, read and send, a line each, as written. */
export const formatTrustView = (file: SourcesFile, view: TrustView): string[] => {
  const lines = [`${file.path} (${file.hash}) would have pulse, as you (uid ${process.getuid?.() ?? '?'}):`];
  if (view.unreadable !== null)
    lines.push(`  nothing yet: ${view.unreadable}; pulse would report its errors`);
  for (const server of view.servers) {
    if (server.transport === 'stdio') {
      lines.push(`  run      server "${server.name}": ${server.target}`);
      lines.push(`             in ${server.cwd ?? 'the folder pulse was started in'}`);
      if (server.env.length > 0) lines.push(`             with env ${listed(server.env)}`);
    } else {
      lines.push(`  connect  server "${server.name}": ${server.target}`);
      if (server.headers.length > 0) lines.push(`             sending headers ${listed(server.headers)}`);
    }
  }
  if (view.model !== null) lines.push(`  send     events to the model endpoint ${view.model}`);
  if (view.variables.length > 0)
    lines.push(
      `  read     from your environment: ${listed(view.variables.map((name) => `\${${name}}`))} (their values go to the servers and endpoint above)`,
    );
  if (view.servers.length === 0 && view.model === null && view.unreadable === null)
    lines.push('  nothing: it names no server and no model endpoint');
  return lines;
};

const ask = async (question: string): Promise<boolean> => {
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
};

/**
 * `pulse trust`: shows what the project's sources.json would run and send, then records, for this
 * user only, that its exact bytes may be acted on (asked on a terminal; `--yes` skips the
 * question). `--revoke` takes every trust of the project back; `--show` only tells; `--print-hash`
 * prints the hash `pulse start --trust-sources` takes.
 */
export const runTrust = async (paths: PulsePaths, options: TrustOptions): Promise<TrustOutcome> => {
  const root = paths.projectRoot;
  if (options.revoke) {
    const count = revokeTrust(root);
    return {
      ok: true,
      text: `Revoked ${count} trust${count === 1 ? '' : 's'} of ${realProject(root)}/.pulse/sources.json: pulse runs none of its servers until you trust it again (a running daemon stops them within a second).`,
    };
  }
  const file = await readSourcesFile(paths.sources);
  if (file === null) return { ok: true, text: `${paths.sources} does not exist: there is nothing to trust.` };
  if (options.printHash) return { ok: true, text: file.hash };
  const view = formatTrustView(file, trustView(file.text)).map(terminalText);
  const trusted = isTrusted(root, file.hash);
  if (options.show || trusted)
    return {
      ok: true,
      text: [
        ...view,
        '',
        trusted ? 'Trusted: yes, as it is now.' : `Trusted: no. To trust it: ${trustCommand(root)}`,
      ].join('\n'),
    };
  console.log(view.join('\n'));
  if (!options.yes) {
    if (!process.stdin.isTTY)
      return {
        ok: false,
        text: `Not trusted: there is no terminal to ask. Having read the above, add --yes: ${trustCommand(root)} --yes`,
      };
    if (!(await ask('Trust this? [y/N] '))) return { ok: false, text: 'Not trusted: nothing was recorded.' };
  }
  const record = recordTrust(root, file.hash);
  return {
    ok: true,
    text: `Trusted ${file.hash} for ${realProject(root)}, recorded in ${record}. A running daemon starts its sources within a second; any change to the file makes it untrusted again.`,
  };
};

/**
 * `pulse start --trust-sources sha256:<hex>` (or `PULSE_TRUST_SOURCES`): trusts sources.json as
 * `pulse trust --yes` does, but only when its bytes have exactly that hash; any other content is
 * refused, with the hash it has. Returns what to say, or null when there is no file.
 */
export const trustByHash = async (paths: PulsePaths, hash: string): Promise<string | null> => {
  if (!isSourcesHash(hash))
    throw new Error(
      `--trust-sources takes sha256:<64 hex digits> (pulse trust --print-hash prints it), not "${hash}".`,
    );
  const file = await readSourcesFile(paths.sources);
  if (file === null) return null;
  if (file.hash !== hash)
    throw new Error(
      `${paths.sources} is not the file you trusted: its hash is ${file.hash}, not ${hash} (--trust-sources or PULSE_TRUST_SOURCES). Read it (${trustCommand(paths.projectRoot)} --show) and pass its new hash, or trust it with ${trustCommand(paths.projectRoot)}.`,
    );
  recordTrust(paths.projectRoot, hash);
  return `Trusted ${hash} for ${paths.sources} (--trust-sources).`;
};
