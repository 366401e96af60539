import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readEvents, waitUntil } from '../helpers/daemon.js';

/** The JSON objects of a CLI's one-object-a-line output (Claude's stream-json, Codex's --json); other lines are skipped. */
export const jsonLines = <T extends object>(text: string): T[] =>
  text.split('\n').flatMap((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value === 'object' && value !== null ? [value as T] : [];
    } catch {
      return [];
    }
  });

/** SIGKILLs a CLI's whole process group (its shells, hooks, MCP children); a group already gone is fine. */
export const killGroup = (pid: number | undefined) => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {}
};

/**
 * The user edits a `.pulse/` file in place (as an editor writing over it does); resolves with the id
 * pulse logged for the new text. A scan that caught the file between truncation and write logs the
 * empty file first, so the edit's event is the one whose hash is the text's.
 */
export const userEdits = async (project: string, file: string, text: string): Promise<string> => {
  const sha256 = createHash('sha256').update(text).digest('hex');
  const before = new Set((await readEvents(project)).map((event) => event.id));
  await writeFile(join(project, '.pulse', file), text);
  return waitUntil(
    async () =>
      (await readEvents(project)).find(
        (event) => !before.has(event.id) && event.path === `.pulse/${file}` && event.sha256 === sha256,
      )?.id,
    { describe: () => `pulse to log the edit of .pulse/${file}` },
  );
};
