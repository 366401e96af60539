import { errorMessage } from '../../machines/error-message.js';
import type { PolledSource } from '../../machines/external.js';
import type { FetchOutcome } from '../../machines/poller-context.js';
import { redactSecrets } from '../log/redact-secrets.js';
import type { ClientPool } from '../sources/client/client-pool.js';
import { checkTool } from '../sources/client/tool-safety.js';
import { extractItems, type ItemReading } from '../sources/items/extract.js';

/**
 * Calls a source's tool through the shared client of its server and extracts the items, once
 * its annotations in `tools/list` show it may be polled: a tool that says it writes or destroys
 * is refused, uncalled. Never throws: a timeout, a crash, garbage or `isError` come back as a
 * failed outcome.
 */
export const createItemFetcher =
  ({
    pool,
    secrets,
    readingOf = () => ({}),
    random = Math.random,
    now = Date.now,
  }: {
    pool: ClientPool;
    secrets: () => readonly string[];
    /** The source's map and rule fields in the current config: an edit counts from the next poll. */
    readingOf?: (source: string) => ItemReading;
    random?: () => number;
    now?: () => number;
  }) =>
  async (source: PolledSource): Promise<FetchOutcome> => {
    const at = now();
    const jitter = random();
    try {
      const tool = await checkTool(pool, source);
      if (tool.verdict === 'refused') {
        return { ok: false, refused: tool, error: tool.message!, at, durationMs: now() - at, jitter };
      }
      const result = await pool.callTool(source.server, source.tool, source.args);
      const items = extractItems(result, readingOf(source.name));
      return { ok: true, items, tool, at, durationMs: now() - at, jitter };
    } catch (error) {
      return {
        ok: false,
        error: redactSecrets(errorMessage(error), secrets()),
        at,
        durationMs: now() - at,
        jitter,
      };
    }
  };
