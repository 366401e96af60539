import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { recordTrust, sourcesHash } from '../../src/trust/trust-store.js';

/** The server name every generated source points at. */
export const SERVER = 'fixture';
/** The fixture tool the sources call. */
export const TOOL = 'list_items';

/** The name of generated source `n`; its `args` are `{ "n": n }`, which the fixture records. */
export const sourceName = (n: number) => `source-${String(n).padStart(3, '0')}`;

/**
 * Creates `<project>/.pulse/sources.json` with one streamable-HTTP server at `url` and `count`
 * sources on it, each polling every `intervalSec`. With `count` 0 the server is configured but
 * nothing polls it: the daemon is otherwise the same. Trusted as `pulse trust --yes` would, since
 * the bench wrote it.
 */
export const writeSourcesProject = async (
  project: string,
  { url, count, intervalSec }: { url: string; count: number; intervalSec: number },
): Promise<void> => {
  const dir = join(project, '.pulse');
  await mkdir(dir, { recursive: true });
  const config = {
    mcpServers: { [SERVER]: { url } },
    sources: Array.from({ length: count }, (_, n) => ({
      name: sourceName(n),
      server: SERVER,
      tool: TOOL,
      args: { n },
      interval_sec: intervalSec,
    })),
  };
  const text = `${JSON.stringify(config, null, 2)}\n`;
  recordTrust(project, sourcesHash(text));
  await writeFile(join(dir, 'sources.json'), text);
};
