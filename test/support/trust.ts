import { join } from 'node:path';
import { recordTrust, sourcesHash } from '../../src/trust/trust-store.js';
import { save } from './files.js';

/**
 * Trusts `text` as the project's `.pulse/sources.json` for this user, as `pulse trust --yes`
 * records it. Call it before writing the file, so a running daemon never sees it untrusted:
 * records are keyed by project and content, so parallel tests never share one.
 */
const trustSources = (project: string, text: string): void => {
  recordTrust(project, sourcesHash(text));
};

/** Writes the project's sources.json as editors do (`save`), trusted first as `pulse trust --yes` would. */
export const saveSources = async (project: string, text: string, tempDir?: string): Promise<void> => {
  trustSources(project, text);
  await save(join(project, '.pulse', 'sources.json'), text, tempDir);
};
